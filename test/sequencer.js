/**
 * Longest files first (the longest-processing-time rule), so the two workers end together rather
 * than one running the longest end-to-end file alone at the end. jest knows how long each file
 * took only from its own earlier runs in the same checkout; a fresh clone (every CI run) has none,
 * and jest then orders by file size, which started crash recovery (the longest file) 911 s into a
 * 1,325 s run. So a file's time is jest's own when it has one, else the seconds measured below,
 * else a guess by project. Files that failed last time still go first.
 *
 * The table is what a whole run measured (`node .ci/summary.js` prints the slowest files); a file
 * that grows or shrinks a lot should have its line updated, a new long file a line of its own.
 */
const Sequencer = require('@jest/test-sequencer').default;
const path = require('node:path');

/** Seconds each file took in a whole run (2026-12-04, two workers, warm n8n cache). */
const MEASURED = {
	'test/e2e/crash-recovery.test.ts': 414,
	'test/e2e/campaign.test.ts': 336,
	'test/e2e/alerts.test.ts': 292,
	'test/protocol/write-model.test.ts': 232,
	'test/e2e/outbox.test.ts': 198,
	'test/e2e/secrets-canary.test.ts': 115,
	'test/e2e/queue-mode.test.ts': 90,
	'test/e2e/editor-outputs.test.ts': 85,
	'test/e2e/consumer-restart.test.ts': 85,
	'test/e2e/lifecycle.test.ts': 83,
	'test/e2e/postgres-restart.test.ts': 81,
	'test/e2e/worked-example.test.ts': 71,
	'test/e2e/console.test.ts': 47,
	'test/e2e/setup.test.ts': 43,
	'test/e2e/forced-timeout.test.ts': 43,
	'test/e2e/dead-letter-park.test.ts': 43,
	'test/e2e/idempotent-write.test.ts': 42,
	'test/e2e/trace-console.test.ts': 32,
	'test/e2e/event-dedupe.test.ts': 26,
	'test/e2e/smoke.test.ts': 25,
	'test/e2e/compensation.test.ts': 17,
	'test/protocol/item-model.test.ts': 16,
	'test/integration/write-protocol.test.ts': 12,
};

/** A file not measured yet: an end-to-end file starts n8n at least once. */
const GUESS = { protocol: 60, e2e: 45, integration: 2, unit: 0.5 };

class LongestFirstSequencer extends Sequencer {
	time(test) {
		const cached = super.time(test);
		if (cached != null) return cached;
		const file = path.relative(test.context.config.rootDir, test.path).split(path.sep).join('/');
		const name = test.context.config.displayName;
		const project = typeof name === 'string' ? name : name?.name;
		return 1000 * (MEASURED[file] ?? GUESS[project] ?? 1);
	}
}

module.exports = LongestFirstSequencer;
