import { savedResponse } from '../../lib/idempotency/responses';
import { MASKED } from '../../lib/masking';

/** What a write saves of a success for its replays: masked, and only as much as is kept. */
describe('the saved response', () => {
	const SECRET = 'Hx7Secret9Kq2Lw';
	const text = (body: string) => ({ status: 200, headers: {}, body });

	it('of a long text is masked only as far as it is kept, and a secret across the cut is masked whole', () => {
		const filler = 'x,'.repeat(5_000_000);
		const body = `${'a'.repeat(995)} password=${SECRET}${SECRET} ${filler}`;
		const started = Date.now();
		const saved = savedResponse(text(body), 1_000);
		expect(Date.now() - started).toBeLessThan(200);
		expect(saved.response_body).toHaveLength(1_000);
		expect(saved.response_body).toBe(`${'a'.repeat(995)} pass`);
		expect(saved.response_truncated).toBe(true);
		const wider = savedResponse(text(body), 1_020);
		expect(wider.response_body).toBe(
			`${'a'.repeat(995)} password=${MASKED} ${'x,'.repeat(10)}`.slice(0, 1_020),
		);
		expect(wider.response_body).not.toContain(SECRET.slice(0, 4));
	});

	it('of a private key that starts before the cut and ends long after it keeps none of it', () => {
		const key = `-----BEGIN PRIVATE KEY-----\n${'MIIE'.repeat(40_000)}${SECRET}\n-----END PRIVATE KEY-----`;
		const saved = savedResponse(text(`ok ${key} done ${'y'.repeat(200_000)}`), 100);
		// Its end lies past what is masked: everything kept after its start is masked.
		expect(saved.response_body).toBe(`ok ${MASKED}`);
		expect(saved.response_body).not.toContain('MIIE');
	});

	it('of a JSON document is masked whole as a structure, never cut first', () => {
		const body = JSON.stringify({
			headers: [
				{ name: 'X-Upstream', value: 'ok' },
				{ name: 'Authorization', value: SECRET },
			],
			rows: Array.from({ length: 20_000 }, (_, i) => ({ i, note: 'filler text' })),
		});
		const saved = savedResponse(text(body), 200);
		expect(saved.response_body).toBe(body.replace(SECRET, MASKED).slice(0, 200));
		expect(saved.response_truncated).toBe(true);
	});
});
