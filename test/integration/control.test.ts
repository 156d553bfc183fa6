import { beat, checkHeartbeats, isPaused, listPauses, pause, resume } from '../../lib/control';
import { getDeadLetters, parkItems } from '../../lib/deadletter';
import { adminQuery, testStore } from '../helpers/store';
import { parkAll } from '../helpers/park';
import { sleep } from '../helpers/sleep';

const { store, schema, cleanup } = testStore('control');
afterAll(cleanup);

describe('pause and resume', () => {
	it('while an integration is paused its items are held, a conflict is not; resume moves the held ones to replay_requested with who and why', async () => {
		const paused = await pause(
			store,
			'integration',
			'crm',
			'maria@ops',
			'CRM outage, vendor ticket 4711',
		);
		expect(paused).toMatchObject({
			scope: 'integration',
			name: 'crm',
			paused: true,
			changedBy: 'maria@ops',
			reason: 'CRM outage, vendor ticket 4711',
		});
		expect(await isPaused(store, 'integration', 'crm')).toBeDefined();

		const [held, other, conflict, conflictAskedHeld] = await parkAll(store, [
			{
				workflowId: 'wf',
				step: 'CRM Upsert',
				integration: 'crm',
				errorClass: 'exhausted',
				payload: { lead: 1 },
			},
			{
				workflowId: 'wf',
				step: 'Mailer',
				integration: 'mail',
				errorClass: 'exhausted',
				payload: { lead: 1 },
			},
			{
				workflowId: 'wf',
				step: 'CRM Upsert',
				integration: 'crm',
				errorClass: 'conflict',
				payload: { lead: 2 },
			},
			{
				workflowId: 'wf',
				step: 'CRM Upsert',
				integration: 'crm',
				errorClass: 'conflict',
				status: 'held',
				holdReason: 'pause',
				payload: { lead: 3 },
			},
		]);
		expect(held.status).toBe('held');
		expect(other.status).toBe('new');
		// A conflict is for a person whatever the integration does: a resume would only replay it
		// into the same conflict.
		expect([conflict.status, conflictAskedHeld.status]).toEqual(['new', 'new']);
		expect((await getDeadLetters(store, [conflict.id]))[0].hold_reason).toBeNull();

		const resumed = await resume(store, 'integration', 'crm', 'maria@ops', 'vendor fixed it');
		expect(resumed).toMatchObject({ paused: false, released: 1 });
		const [record] = await getDeadLetters(store, [held.id]);
		expect(record.status).toBe('replay_requested');
		expect(record.history.at(-1)).toMatchObject({
			actor: 'maria@ops',
			fromStatus: 'held',
			toStatus: 'replay_requested',
			reason: 'integration crm resumed: vendor fixed it',
		});
		expect(await isPaused(store, 'integration', 'crm')).toBeUndefined();
		const log = await adminQuery<{ paused: boolean; actor: string }>(
			`SELECT paused, actor FROM "${schema}".pause_events WHERE name = 'crm' ORDER BY id`,
		);
		expect(log).toEqual([
			{ paused: true, actor: 'maria@ops' },
			{ paused: false, actor: 'maria@ops' },
		]);
	});

	it('a pause without an actor or a reason is refused and changes nothing', async () => {
		await expect(pause(store, 'workflow', 'nightly', '', 'because')).rejects.toThrow(
			/needs an actor/,
		);
		await expect(pause(store, 'workflow', 'nightly', 'maria', ' ')).rejects.toThrow(
			/needs a reason/,
		);
		expect(await listPauses(store, { name: 'nightly' })).toEqual([]);
	});
});

describe('heartbeats', () => {
	it('a late heartbeat is reported once, then its recovery once', async () => {
		await beat(store, { name: 'invoice import', periodSeconds: 1, graceSeconds: 3600 });
		expect((await checkHeartbeats(store)).changes).toEqual([]);
		await sleep(1_200);

		const first = await checkHeartbeats(store);
		expect(first.changes.map((c) => [c.name, c.event])).toEqual([['invoice import', 'late']]);
		expect((await checkHeartbeats(store)).changes).toEqual([]);

		await beat(store, { name: 'invoice import', periodSeconds: 60, graceSeconds: 3600 });
		const recovered = await checkHeartbeats(store);
		expect(recovered.changes.map((c) => [c.name, c.event, c.previousState])).toEqual([
			['invoice import', 'recovered', 'late'],
		]);
		expect((await checkHeartbeats(store)).changes).toEqual([]);
	});

	it('down after the grace, reported once even when two watches check at the same moment', async () => {
		await beat(store, { name: 'crm sync', periodSeconds: 1, graceSeconds: 0 });
		await sleep(1_200);
		const [a, b] = await Promise.all([
			checkHeartbeats(store, ['crm sync']),
			checkHeartbeats(store, ['crm sync']),
		]);
		expect([...a.changes, ...b.changes].map((c) => c.event)).toEqual(['down']);
		const stillRunning = await checkHeartbeats(store, ['invoice import']);
		expect(stillRunning.heartbeats.map((h) => h.state)).toEqual(['up']);
	});

	it('a beat without a schedule is refused', async () => {
		await expect(beat(store, { name: 'no schedule' })).rejects.toThrow(/needs a period or a cron/);
		await expect(beat(store, { name: 'bad cron', cron: '99 * * * *' })).rejects.toThrow(
			/out of range/,
		);
	});
});

describe('schedules are checked before they are stored', () => {
	const stored = async (name: string) =>
		adminQuery(`SELECT * FROM "${schema}".heartbeats WHERE name = $1`, [name]);

	it('a cron that never fires (0 0 30 2 *, February 30th) is refused and nothing is stored', async () => {
		await expect(beat(store, { name: 'feb 30', cron: '0 0 30 2 *' })).rejects.toThrow(
			/Heartbeat "feb 30": cron "0 0 30 2 \*" cannot be used: Cron never fires/,
		);
		expect(await stored('feb 30')).toHaveLength(0);
		// February 29th does fire (every four years): accepted.
		await beat(store, { name: 'leap day', cron: '0 0 29 2 *' });
		expect(await stored('leap day')).toHaveLength(1);
	});

	it.each([
		[{ periodSeconds: 0 }, /Period \(seconds\) must be from 1 to 31622400, got 0/],
		[{ periodSeconds: -60 }, /Period \(seconds\) must be from 1 to 31622400, got -60/],
		[{ periodSeconds: Number.NaN }, /Period \(seconds\) must be from 1/],
		[{ periodSeconds: 1e12 }, /Period \(seconds\) must be from 1 to 31622400/],
		[
			{ periodSeconds: 60, graceSeconds: -1 },
			/Grace \(seconds\) must be from 0 to 31622400, got -1/,
		],
		[{ periodSeconds: 60, graceSeconds: 1e15 }, /Grace \(seconds\)/],
		[{ cron: 42 as unknown as string }, /Cron must be text/],
	])('%j is refused, naming the parameter and its range', async (schedule, message) => {
		await expect(beat(store, { name: 'bad numbers', ...schedule })).rejects.toThrow(message);
		expect(await stored('bad numbers')).toHaveLength(0);
	});

	it('a bad row stored by an older version is reported on its own line; the others are still checked, listed and scraped', async () => {
		const { listHeartbeats } = await import('../../lib/control');
		const { prometheusMetrics, handleConsoleRequest, consoleSecret, formToken } =
			await import('../../lib/console');
		await beat(store, { name: 'healthy', periodSeconds: 3600 });
		await beat(store, { name: 'stopped', periodSeconds: 60 });
		await adminQuery(
			`UPDATE "${schema}".heartbeats SET last_beat_at = now() - interval '1 hour' WHERE name = 'stopped'`,
		);
		// What an older version stored without checking.
		await adminQuery(
			`INSERT INTO "${schema}".heartbeats (name, cron, grace_seconds) VALUES ('impossible', '0 0 30 2 *', 0)`,
		);

		const first = await checkHeartbeats(store);
		const byName = Object.fromEntries(first.heartbeats.map((h) => [h.name, h]));
		expect(byName.healthy.state).toBe('up');
		expect(byName.stopped.state).toBe('down');
		expect(byName.impossible).toMatchObject({ state: 'invalid', dueAt: null });
		expect(byName.impossible.problem).toMatch(/never fires/);
		const events = Object.fromEntries(first.changes.map((c) => [c.name, c.event]));
		expect(events).toMatchObject({ stopped: 'down', impossible: 'invalid' });
		// Reported once, like late and down.
		const second = await checkHeartbeats(store);
		expect(second.changes.filter((c) => c.name === 'impossible')).toEqual([]);

		expect((await listHeartbeats(store)).map((h) => h.name)).toEqual(
			expect.arrayContaining(['healthy', 'stopped', 'impossible']),
		);
		const metrics = await prometheusMetrics(store);
		expect(metrics).toContain('reliability_heartbeat_state{name="healthy",state="up"} 1');
		expect(metrics).toContain('reliability_heartbeat_state{name="stopped",state="down"} 1');
		const secret = await consoleSecret(store);
		const authorization = `Basic ${Buffer.from('maria:x').toString('base64')}`;
		const page = await handleConsoleRequest(store, {
			headers: { authorization },
			query: { view: 'controls' },
			body: { token: formToken(secret, 'maria') },
		});
		expect(page.statusCode).toBe(200);
		expect(page.body).toMatch(/data-name="impossible"[\s\S]*invalid[\s\S]*never fires/);
		expect(page.body).toMatch(/data-name="healthy"/);

		// A beat with a valid schedule repairs it, and the watch reports the recovery.
		await beat(store, { name: 'impossible', cron: '0 6 * * *' });
		const third = await checkHeartbeats(store);
		expect(third.changes.find((c) => c.name === 'impossible')?.event).toBe('recovered');
	});
});

describe('dead-letter parameters are checked before anything is written', () => {
	it.each([
		[
			{ retentionDays: 0 },
			/Item 1: Retention \(Days\) must be a whole number from 1 to 3650, got 0/,
		],
		[{ retentionDays: 1e9 }, /Item 1: Retention \(Days\) must be a whole number from 1 to 3650/],
		[{ retentionDays: 2.5 }, /Retention \(Days\) must be a whole number/],
		[{ status: 'gone' as never }, /Item 1: an item is parked as new or held, not as "gone"/],
		[
			{ status: 'resolved' as never },
			/Item 1: an item is parked as new or held, not as "resolved"/,
		],
		[{ step: '' }, /Item 1 has no Step/],
		[{ attempts: -1 }, /Item 1: attempts must be a whole number from 0/],
		[
			{ retryAfter: new Date(Number.NaN) },
			/Item 1: the retry time is not a valid date \(1970 to 9999\)/,
		],
	])(
		'a batch with %j in its second item refuses that item, naming it, and parks the first',
		async (bad, message) => {
			const { ItemError } = await import('../../lib/errors');
			const before = await adminQuery(`SELECT id FROM "${schema}".dead_letters`);
			const payload = { a: 1, case: String(message) };
			const ok = { workflowId: 'wf', step: 'S', errorClass: 'permanent', payload };
			const [first, second] = await parkItems(store, [ok, { ...ok, payload: { a: 2 }, ...bad }]);
			expect(second.refused?.message).toMatch(message);
			expect(second.refused).toBeInstanceOf(ItemError);
			expect(second.refused?.itemIndex).toBe(1);
			expect(first.refused).toBeUndefined();
			const after = await adminQuery<{ payload: unknown }>(
				`SELECT payload FROM "${schema}".dead_letters WHERE NOT id = ANY($1::bigint[])`,
				[before.map((row) => row.id)],
			);
			expect(after).toEqual([{ payload }]);
		},
	);

	it('list, stats and status changes refuse values out of range with the range, not a database error', async () => {
		const { listDeadLetters, deadLetterStats, updateDeadLetterStatus } =
			await import('../../lib/deadletter');
		const { ConfigurationError } = await import('../../lib/errors');
		await expect(listDeadLetters(store, { limit: -1 })).rejects.toThrow(
			/Limit must be a whole number from 1 to 10000, got -1/,
		);
		await expect(listDeadLetters(store, { olderThanMinutes: 1e300 })).rejects.toBeInstanceOf(
			ConfigurationError,
		);
		await expect(deadLetterStats(store, { days: 1e10 })).rejects.toThrow(
			/Days must be a whole number from 1 to 3650/,
		);
		await expect(
			updateDeadLetterStatus(store, { id: 'abc', to: 'resolved', actor: 'x', reason: 'y' }),
		).rejects.toThrow(/Dead letter ID "abc" is not a number/);
	});

	it('NUL and unpaired surrogates in any text are stored as U+FFFD instead of failing the batch', async () => {
		const [parked] = await parkAll(store, [
			{
				workflowId: 'wf\u0000x',
				step: 'Step \ud800',
				errorClass: 'permanent',
				idempotencyKey: 'key\u0000',
				errorMessage: 'bad\u0000byte',
				payload: { 'k\u0000': 'v\u0000\udfff' },
			},
		]);
		const [record] = await getDeadLetters(store, [parked.id]);
		expect(record).toMatchObject({
			workflow_id: 'wf\ufffdx',
			step: 'Step \ufffd',
			idempotency_key: 'key\ufffd',
			error_message: 'bad\ufffdbyte',
			payload: { 'k\ufffd': 'v\ufffd\ufffd' },
		});
	});
});

describe('wrong types and conflicts end in the engine’s own errors', () => {
	it('a pause with a name or actor that is not text is refused, naming it', async () => {
		const { PauseChangeRefusedError } = await import('../../lib/control');
		await expect(
			pause(store, 'integration', 0 as unknown as string, 'maria', 'why'),
		).rejects.toBeInstanceOf(PauseChangeRefusedError);
		await expect(
			pause(store, 'integration', 'crm', {} as unknown as string, 'why'),
		).rejects.toThrow(/the actor must be text/);
		await expect(resume(store, 'nonsense' as never, 'crm', 'maria', '')).rejects.toThrow(
			/Pause scope "nonsense" is unknown/,
		);
	});

	it('reopening a closed record is refused (the same item is open again), and nothing changes', async () => {
		const { updateDeadLetterStatus } = await import('../../lib/deadletter');
		const item = {
			workflowId: 'wf-re',
			step: 'S',
			errorClass: 'permanent',
			idempotencyKey: 'k-re',
			payload: {},
		};
		const [first] = await parkAll(store, [item]);
		await updateDeadLetterStatus(store, {
			id: first.id,
			to: 'resolved',
			actor: 'ops',
			reason: 'done by hand',
		});
		const [second] = await parkAll(store, [item]);
		expect(second.id).not.toBe(first.id);
		await expect(
			updateDeadLetterStatus(store, { id: first.id, to: 'new', actor: 'ops' }),
		).rejects.toThrow(`Dead letter ${first.id} is resolved (closed): it cannot move to new`);
		expect((await getDeadLetters(store, [first.id]))[0].status).toBe('resolved');
	});

	it('a payload of null is parked as {}', async () => {
		const [parked] = await parkAll(store, [
			{ workflowId: 'wf-null', step: 'S', errorClass: 'permanent', payload: null },
		]);
		expect((await getDeadLetters(store, [parked.id]))[0].payload).toEqual({});
	});
});
