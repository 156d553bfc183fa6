import { parkItems } from '../../lib/deadletter';
import { adminQuery, testStore } from '../helpers/store';

/**
 * What a dead letter keeps of a payload and a message full of real-world secret names and
 * credential shapes: none of the secrets, anywhere in the row.
 */
const { store, schema, cleanup } = testStore('masking_store');
afterAll(cleanup);

const CANARY = 'Vq8Canary3Lp7Rz';

it('a parked item keeps none of its secrets, by name or by shape, in any column', async () => {
	const payload = {
		aws_secret_access_key: CANARY,
		secretKey: CANARY,
		api_secret_key: CANARY,
		passphrase: CANARY,
		pwd: CANARY,
		private_key_pem: CANARY,
		config: {
			storage: `DefaultEndpointsProtocol=https;AccountName=shop;AccountKey=${CANARY}==;`,
			blob: `https://shop.blob.core.windows.net/c?sv=2022-11-02&sig=${CANARY}`,
			database: `Server=db;Uid=sa;Pwd=${CANARY};`,
			key: `-----BEGIN PRIVATE KEY-----\nMIIE${CANARY}\n-----END PRIVATE KEY-----`,
		},
		value: `ghp_${CANARY}${CANARY}abcdef`,
		order: {
			id: 'ord_42',
			sha: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
		},
	};
	await parkItems(store, [
		{
			workflowId: 'wf-mask',
			step: 'Post Order',
			errorClass: 'permanent',
			errorMessage: `422: the password ${CANARY} was refused for AKIAIOSFODNN7EXAMPLE`,
			payload,
		},
	]);
	const [row] = await adminQuery<{ row: string }>(
		`SELECT row_to_json(d)::text AS row FROM "${schema}".dead_letters d WHERE workflow_id = 'wf-mask'`,
	);
	expect(row.row).not.toContain(CANARY);
	expect(row.row).not.toContain('AKIAIOSFODNN7EXAMPLE');
	expect(row.row).toContain('ord_42');
	expect(row.row).toContain('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
});
