/**
 * Four projects: unit (pure logic), integration (the engine on real Postgres, each file in its
 * own schema), protocol (the model check's short budget and its regressions, on real Postgres)
 * and e2e (the built package inside real n8n processes, every version under test).
 * The global setup finds or starts Postgres and installs n8n into the cache outside the repo.
 */
const common = {
	preset: 'ts-jest',
	testEnvironment: 'node',
	transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: false }] },
};

module.exports = {
	// Two files at once on this 2-core machine (jest's default there is one): an end-to-end file
	// spends much of its time waiting on n8n, leases and retries, and another file fills that
	// time. The sequencer starts the longest files (the model check, end to end) first.
	maxWorkers: 2,
	testSequencer: '<rootDir>/test/sequencer.js',
	globalSetup: '<rootDir>/test/global-setup.ts',
	globalTeardown: '<rootDir>/test/global-teardown.ts',
	testTimeout: 120_000,
	projects: [
		{ ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
		{
			...common,
			displayName: 'integration',
			testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
		},
		{
			...common,
			displayName: 'protocol',
			testMatch: ['<rootDir>/test/protocol/**/*.test.ts'],
		},
		{
			...common,
			displayName: 'e2e',
			testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
			slowTestThreshold: 120,
		},
	],
};
