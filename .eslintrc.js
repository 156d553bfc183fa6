/** Lint for the published code: n8n's community, credential and node rules. */
module.exports = {
	root: true,
	env: { node: true, es2022: true },
	parser: '@typescript-eslint/parser',
	parserOptions: {
		project: ['./tsconfig.json'],
		sourceType: 'module',
		extraFileExtensions: ['.json'],
	},
	ignorePatterns: ['.eslintrc.js', '**/*.js', '**/node_modules/**', '**/dist/**'],
	overrides: [
		{
			files: ['package.json'],
			plugins: ['eslint-plugin-n8n-nodes-base'],
			extends: ['plugin:n8n-nodes-base/community'],
			rules: { 'n8n-nodes-base/community-package-json-name-still-default': 'off' },
		},
		{
			files: ['./credentials/**/*.ts'],
			plugins: ['eslint-plugin-n8n-nodes-base'],
			extends: ['plugin:n8n-nodes-base/credentials'],
			rules: {
				// The credential is named "Reliability Store" in the product and its docs; it is
				// a Postgres connection, not an API.
				'n8n-nodes-base/cred-class-field-display-name-missing-api': 'off',
				// A community credential links to a full URL; the camelCase slug rule is for n8n's own docs.
				'n8n-nodes-base/cred-class-field-documentation-url-miscased': 'off',
			},
		},
		{
			files: ['./nodes/**/*.ts'],
			plugins: ['eslint-plugin-n8n-nodes-base'],
			extends: ['plugin:n8n-nodes-base/nodes'],
		},
		{
			// Descriptions and operations live beside the node class, as in n8n's Postgres v2.
			files: ['./nodes/**/*.ts'],
			excludedFiles: ['./nodes/**/*.node.ts'],
			rules: { 'n8n-nodes-base/node-filename-against-convention': 'off' },
		},
	],
};
