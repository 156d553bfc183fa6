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
