import { keptInputs, REGRESSION_DIR, replayKept } from '../../scripts/fuzz';

/**
 * Every input `npm run check:fuzz` kept when it failed (test/integration/fuzz-regressions),
 * run again as the fuzzer ran it: its canary, its time budget, the store read back. Each must
 * pass now; a kept input is committed with the fix that made it pass.
 */
jest.setTimeout(120_000);

const kept = keptInputs(REGRESSION_DIR);

it('the kept inputs are there to replay', () => {
	expect(kept.length).toBeGreaterThan(0);
});

it.each(kept.map(({ file, kept }) => [file.slice(REGRESSION_DIR.length + 1), kept] as const))(
	'%s passes now',
	async (_name, input) => {
		const finding = await replayKept(input);
		expect(finding ? `${finding.kind}: ${finding.detail}` : 'passes').toBe('passes');
	},
);
