import type { ICredentialType, INodeProperties } from 'n8n-workflow';

/**
 * The Postgres connection of the reliability store. Every node of the package uses it; the
 * nodes' credential test (lib/store/diagnose.ts) says what it found or exactly what failed.
 */
export class ReliabilityStoreApi implements ICredentialType {
	name = 'reliabilityStoreApi';

	displayName = 'Reliability Store';

	documentationUrl =
		'https://www.npmjs.com/package/n8n-nodes-reliability#the-reliability-store-credential';

	icon = 'file:reliabilityStore.svg' as const;

	properties: INodeProperties[] = [
		{
			displayName: 'Host',
			name: 'host',
			type: 'string',
			default: 'localhost',
		},
		{
			displayName: 'Port',
			name: 'port',
			type: 'number',
			default: 5432,
		},
		{
			displayName: 'Database',
			name: 'database',
			type: 'string',
			default: 'postgres',
		},
		{
			displayName: 'User',
			name: 'user',
			type: 'string',
			default: 'postgres',
		},
		{
			displayName: 'Password',
			name: 'password',
			type: 'string',
			typeOptions: { password: true },
			default: '',
		},
		{
			displayName: 'SSL',
			name: 'ssl',
			type: 'options',
			options: [
				{ name: 'Disable', value: 'disable', description: 'Plain connection' },
				{
					name: 'Allow',
					value: 'allow',
					description: 'Plain connection, switching to TLS when the server requires it',
				},
				{
					name: 'Require',
					value: 'require',
					description: 'TLS without checking the certificate; fails when the server has no TLS',
				},
				{
					name: 'Verify',
					value: 'verify',
					description: 'TLS with the certificate checked against the CA below and the host name',
				},
			],
			default: 'disable',
		},
		{
			displayName: 'CA Certificate',
			name: 'ca',
			type: 'string',
			typeOptions: { rows: 4 },
			displayOptions: { show: { ssl: ['verify'] } },
			default: '',
			description: 'PEM of the certificate authority that signed the server certificate',
		},
		{
			displayName: 'Schema',
			name: 'schema',
			type: 'string',
			default: 'n8n_reliability',
			description: 'Schema that holds the store tables; created and migrated on first use',
		},
		{
			displayName: 'Max Connections',
			name: 'maxConnections',
			type: 'number',
			typeOptions: { minValue: 1, maxValue: 1000 },
			default: 10,
			description: 'Size of the connection pool each n8n process keeps for this credential',
		},
	];
}
