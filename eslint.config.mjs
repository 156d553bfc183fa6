/**
 * Lint: n8n's official community-node rules (@n8n/eslint-plugin-community-nodes, the set for
 * packages that are not offered on n8n Cloud) over the published code and package.json, n8n's
 * community, credential and node rules (eslint-plugin-n8n-nodes-base) over package.json,
 * credentials/ and nodes/, and typescript-eslint's recommended rules over every TypeScript file.
 * Every rule that is off here says why.
 */
import { n8nCommunityNodesPlugin } from '@n8n/eslint-plugin-community-nodes';
import n8nNodesBase from 'eslint-plugin-n8n-nodes-base';
import tseslint from 'typescript-eslint';

const communityNodes = n8nCommunityNodesPlugin.configs.recommendedWithoutN8nCloudSupport;
const engineFreeOfN8n =
	'lib/ is the engine, free of n8n: take plain values, return outcomes, throw errors of lib/errors.ts.';

export default tseslint.config(
	{ ignores: ['dist/**', 'node_modules/**', 'test/artifacts/**', '**/*.js', '**/*.mjs'] },
	{
		files: ['**/*.ts'],
		extends: [tseslint.configs.recommended],
	},
	{
		// The published code: what n8n loads from dist/ (nodes, credentials, and the engine they bundle).
		files: ['nodes/**/*.ts', 'credentials/**/*.ts', 'lib/**/*.ts'],
		extends: [communityNodes],
	},
	{
		// The engine is free of n8n types by design: it throws its own errors (with a cause and a
		// hint), and the node layer turns them into NodeOperationError with the item index. So it
		// imports nothing of n8n's: only nodes/ and credentials/ know n8n.
		files: ['lib/**/*.ts'],
		rules: {
			'@n8n/community-nodes/require-node-api-error': 'off',
			'no-restricted-imports': [
				'error',
				{
					paths: [
						{
							name: 'n8n-workflow',
							message: engineFreeOfN8n,
						},
					],
					patterns: [
						{
							// A deep import (n8n-workflow/dist/...) is still n8n.
							group: ['n8n-workflow/*'],
							message: engineFreeOfN8n,
						},
						{
							group: ['**/nodes/**', '**/credentials/**'],
							message: 'lib/ never imports the node layer.',
						},
					],
				},
			],
		},
	},
	{
		// The write's request building throws ItemError for one item's bad input, also inside a
		// catch (a JSON body that does not parse); the catch around each item turns it into a
		// NodeOperationError with the item's index, so that one item fails alone.
		files: ['nodes/IdempotentHttpWrite/write.ts', 'nodes/IdempotentHttpWrite/requestBody.ts'],
		rules: { '@n8n/community-nodes/require-node-api-error': 'off' },
	},
	{
		// Event Dedupe routes items to New, Duplicate, Stale and Invalid; Reliability Control
		// serves webhooks, heartbeats and metrics; Transactional Outbox runs the user's SQL in a
		// transaction. None is a call an AI agent makes, so none is offered as a tool (Idempotent
		// HTTP Write and Dead Letter Park are).
		files: [
			'nodes/EventDedupe/EventDedupe.node.ts',
			'nodes/ReliabilityControl/ReliabilityControl.node.ts',
			'nodes/TransactionalOutbox/TransactionalOutbox.node.ts',
		],
		rules: { '@n8n/community-nodes/node-usable-as-tool': 'off' },
	},
	{
		// Idempotent HTTP Write authenticates its requests with n8n's generic HTTP credential types
		// (Basic, Bearer, Header, Query, OAuth2), as the HTTP Request node does, so that every
		// target's login works without a credential type of this package for each; Transactional
		// Outbox writes to a business database through n8n's own Postgres credential; Reliability
		// Control's Setup writes the bundled workflows with n8n's own n8n API credential and puts
		// the user's Basic Auth and Header Auth credentials on the console's and metrics' webhooks.
		files: [
			'nodes/IdempotentHttpWrite/IdempotentHttpWrite.node.ts',
			'nodes/TransactionalOutbox/TransactionalOutbox.node.ts',
			'nodes/ReliabilityControl/ReliabilityControl.node.ts',
		],
		rules: {
			'@n8n/community-nodes/no-credential-reuse': 'off',
			'@n8n/community-nodes/valid-credential-references': 'off',
		},
	},
	{
		files: ['package.json'],
		extends: [communityNodes],
		plugins: { 'n8n-nodes-base': n8nNodesBase },
		languageOptions: {
			parser: tseslint.parser,
			parserOptions: { extraFileExtensions: ['.json'] },
		},
		rules: {
			...n8nNodesBase.configs.community.rules,
			'n8n-nodes-base/community-package-json-name-still-default': 'off',
		},
	},
	{
		files: ['credentials/**/*.ts'],
		plugins: { 'n8n-nodes-base': n8nNodesBase },
		rules: {
			...n8nNodesBase.configs.credentials.rules,
			// The credential is named "Reliability Store" in the product and its docs; it is
			// a Postgres connection, not an API.
			'n8n-nodes-base/cred-class-field-display-name-missing-api': 'off',
			// A community credential links to a full URL; the camelCase slug rule is for n8n's own docs.
			'n8n-nodes-base/cred-class-field-documentation-url-miscased': 'off',
		},
	},
	{
		files: ['nodes/**/*.ts'],
		plugins: { 'n8n-nodes-base': n8nNodesBase },
		rules: {
			...n8nNodesBase.configs.nodes.rules,
			// These two ask for the string literal ['main'], which the community rule
			// node-connection-type-literal replaces with NodeConnectionTypes.Main (n8n's node CLI
			// turns them off for the same reason); they cannot check a node with several outputs.
			'n8n-nodes-base/node-class-description-inputs-wrong-regular-node': 'off',
			'n8n-nodes-base/node-class-description-outputs-wrong': 'off',
		},
	},
	{
		// Descriptions and operations live beside the node class, as in n8n's Postgres v2.
		files: ['nodes/**/*.ts'],
		ignores: ['nodes/**/*.node.ts'],
		rules: { 'n8n-nodes-base/node-filename-against-convention': 'off' },
	},
);
