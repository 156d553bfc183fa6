import { runFuzz } from '../../scripts/fuzz';

/**
 * `npm run check:fuzz` on a short budget: 300 hostile inputs through every engine entry, a new
 * seed each run (FUZZ_SEED picks one). A failure names the shrunk input and the seed to run it
 * again with `npm run check:fuzz -- --inputs 300 --seed <seed>`.
 */
jest.setTimeout(300_000);

it('300 hostile inputs: no crash, nothing unescaped on a page, no secret stored or shown', async () => {
	const lines: string[] = [];
	const result = await runFuzz({
		inputs: 300,
		seed: process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED),
		log: (line) => lines.push(line),
	});
	// On a failure, the report: the reason, the shrunk input and the seed.
	expect(result.failure ? lines.join('\n') : 'no failure').toBe('no failure');
	expect(result).toMatchObject({ inputs: 300, crashes: 0, unescaped: 0, leaks: 0 });
});

it('a slow finding shrinks within its cap, is kept, and the kept input replays', async () => {
	const { mkdtempSync, rmSync } = await import('node:fs');
	const { tmpdir } = await import('node:os');
	const { join } = await import('node:path');
	const { keptInputs, replayKept } = await import('../../scripts/fuzz');
	const dir = mkdtempSync(join(tmpdir(), 'fuzz-kept-'));
	try {
		// A budget of 0 ms makes every input slow, and every smaller variant of it too: without a
		// cap, shrinking would try them all.
		const started = Date.now();
		const result = await runFuzz({
			inputs: 20,
			seed: 42,
			only: ['park'],
			timeBudget: { baseMs: 0, msPer100Kb: 0 },
			shrinkBudget: { ms: 60_000, steps: 5 },
			regressionDir: dir,
			log: () => undefined,
		});
		expect(result).toMatchObject({ slow: 1, shrinkCapped: true, crashes: 0, leaks: 0 });
		expect(Date.now() - started).toBeLessThan(60_000);
		const [kept] = keptInputs(dir);
		expect(kept.file).toBe(result.regressionFile);
		expect(kept.kept).toMatchObject({ seed: 42, reason: expect.stringMatching(/^slow: /) });
		// Read back as the same input: within the real budget it passes.
		expect(await replayKept(kept.kept)).toBeUndefined();
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});
