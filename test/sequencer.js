/**
 * Runs the end-to-end files first, then the model check, integration and unit files; within a
 * project, jest's own order (files that failed last time, then the slowest, then the largest).
 * With several workers the suite ends when its longest file does, so the longest files (the
 * end-to-end ones, minutes each) must start at once, and the short ones fill the gaps at the end.
 * A fresh clone has no timings of its own yet, which is why the project decides first.
 */
const Sequencer = require('@jest/test-sequencer').default;

const RANK = { e2e: 0, protocol: 1, integration: 2, unit: 3 };

class ProjectsSequencer extends Sequencer {
	sort(tests) {
		const rank = (test) => {
			const name = test.context.config.displayName;
			return RANK[typeof name === 'string' ? name : name?.name] ?? 4;
		};
		return super
			.sort(tests)
			.map((test, order) => ({ test, order }))
			.sort((a, b) => rank(a.test) - rank(b.test) || a.order - b.order)
			.map(({ test }) => test);
	}
}

module.exports = ProjectsSequencer;
