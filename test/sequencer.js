/**
 * Runs the model check first, then the end-to-end files, then integration and unit files; within
 * a project, jest's own order (files that failed last time, then the slowest, then the largest).
 * With several workers the suite ends when its longest file does, so the long files (the write
 * model's search, five minutes and more; the end-to-end ones, minutes each) must start at once,
 * and the short ones fill the gaps at the end: started last, the write model ran alone for its
 * last minutes. A fresh clone has no timings of its own yet, which is why the project decides.
 */
const Sequencer = require('@jest/test-sequencer').default;

const RANK = { protocol: 0, e2e: 1, integration: 2, unit: 3 };

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
