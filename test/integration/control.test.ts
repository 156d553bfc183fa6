import { beat, checkHeartbeats, isPaused, listPauses, pause, resume } from '../../lib/control';
import { getDeadLetters, parkItems } from '../../lib/deadletter';
import { adminQuery, testStore } from '../helpers/store';

const { store, schema, cleanup } = testStore('control');
afterAll(cleanup);

describe('pause and resume', () => {
	it('while an integration is paused its items are held; resume moves them to replay_requested with who and why', async () => {
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

		const [held, other] = await parkItems(store, [
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
		]);
		expect(held.status).toBe('held');
		expect(other.status).toBe('new');

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
		await new Promise((r) => setTimeout(r, 1_200));

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
		await new Promise((r) => setTimeout(r, 1_200));
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
