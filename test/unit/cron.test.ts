import { nextCronTime, parseCron } from '../../lib/control/cron';
import { heartbeatStatus } from '../../lib/control/heartbeats';

const at = (iso: string) => new Date(iso);

describe('cron schedules of heartbeats (UTC)', () => {
	it.each([
		['*/15 * * * *', '2026-11-30T10:07:30Z', '2026-11-30T10:15:00Z'],
		['0 6 * * *', '2026-11-30T06:00:00Z', '2026-12-01T06:00:00Z'],
		['0 6 * * 1-5', '2026-12-04T07:00:00Z', '2026-12-07T06:00:00Z'],
		['30 2 1 * *', '2026-11-30T00:00:00Z', '2026-12-01T02:30:00Z'],
		['0 0 * * 7', '2026-11-30T00:00:00Z', '2026-12-06T00:00:00Z'],
		['5,35 9-10 * * *', '2026-11-30T09:36:00Z', '2026-11-30T10:05:00Z'],
	])('%s after %s fires at %s', (expression, after, expected) => {
		expect(nextCronTime(parseCron(expression), at(after)).toISOString()).toBe(
			at(expected).toISOString(),
		);
	});

	it.each([
		['* * * *', /needs five fields/],
		['61 * * * *', /out of range 0-59/],
		['a * * * *', /not understood/],
	])('refuses %s', (expression, message) => {
		expect(() => parseCron(expression)).toThrow(message);
	});

	it('finds February 29th, up to four years away', () => {
		expect(nextCronTime(parseCron('0 0 29 2 *'), at('2029-03-01T00:00:00Z')).toISOString()).toBe(
			'2032-02-29T00:00:00.000Z',
		);
	});

	it.each(['0 0 30 2 *', '0 0 31 4,6,9,11 *'])(
		'%s never fires: an error that says why',
		(expression) => {
			expect(() => nextCronTime(parseCron(expression), at('2026-11-30T00:00:00Z'))).toThrow(
				/never fires: no date has that day of the month/,
			);
		},
	);
});

describe('heartbeat state', () => {
	const row = (
		lastBeat: string,
		now: string,
		extra: Partial<{
			period_seconds: number | null;
			cron: string | null;
			grace_seconds: number;
		}> = {},
	) => ({
		name: 'nightly import',
		period_seconds: 3600,
		cron: null,
		grace_seconds: 600,
		last_beat_at: at(lastBeat),
		db_now: at(now),
		...extra,
	});

	it('is up until the period has passed, late within the grace, down after it', () => {
		expect(heartbeatStatus(row('2026-11-30T10:00:00Z', '2026-11-30T11:00:00Z')).state).toBe('up');
		expect(heartbeatStatus(row('2026-11-30T10:00:00Z', '2026-11-30T11:05:00Z')).state).toBe('late');
		expect(heartbeatStatus(row('2026-11-30T10:00:00Z', '2026-11-30T11:10:01Z')).state).toBe('down');
	});

	it('follows the cron when there is one', () => {
		const cron = { period_seconds: null, cron: '0 6 * * *', grace_seconds: 1800 };
		const status = heartbeatStatus(row('2026-11-29T06:00:05Z', '2026-11-30T06:20:00Z', cron));
		expect(status.dueAt!.toISOString()).toBe('2026-11-30T06:00:00.000Z');
		expect(status.state).toBe('late');
		expect(heartbeatStatus(row('2026-11-29T06:00:05Z', '2026-11-30T06:31:00Z', cron)).state).toBe(
			'down',
		);
	});

	it('a stored schedule that cannot be checked is invalid, with the reason, not an error', () => {
		const status = heartbeatStatus(
			row('2026-11-29T06:00:05Z', '2026-11-30T06:31:00Z', {
				period_seconds: null,
				cron: '0 0 30 2 *',
			}),
		);
		expect(status).toMatchObject({ state: 'invalid', dueAt: null, downAt: null });
		expect(status.problem).toMatch(/never fires.*A new beat with a valid schedule replaces it/);
		expect(
			heartbeatStatus(row('2026-11-29T06:00:05Z', '2026-11-30T06:31:00Z', { cron: 'x' })).state,
		).toBe('invalid');
	});
});
