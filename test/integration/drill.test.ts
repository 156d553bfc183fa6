import {
	armForcedTimeout,
	DrillRefusedError,
	drillEvents,
	getDrill,
	startDrill,
	stopDrill,
} from '../../lib/drill';
import { runWrites, type WriteContext } from '../../lib/idempotency';
import { fileTarget } from '../helpers/target';
import { fetchSender } from '../helpers/send';
import { writeContexts } from '../helpers/writeContext';
import { adminQuery, testStore } from '../helpers/store';
import { writeRequest } from '../helpers/writeRequest';

/**
 * Fire drill mode against a real HTTP target: switched on per integration for at most an hour,
 * every change in its trail; an armed forced timeout discards the answer of the integration's
 * next committed write, once, and the write recovers by its key as its On Unknown Outcome says,
 * never with a second effect. Other integrations, and an integration whose drill ended, are
 * untouched.
 */
const { store, schema, cleanup } = testStore('drill');
const target = fileTarget();
afterAll(cleanup);

const context = writeContexts({
	workflowId: 'wf-drill',
	node: 'Upsert Contact',
	integration: 'crm',
	inFlightGraceMs: 20,
});
const TIMEOUT_MS = 500;
const write = (key: string, body: unknown) =>
	writeRequest({ scope: 'drill', key, url: '/x', body, timeoutMs: TIMEOUT_MS });
const record = async (key: string) =>
	(
		await adminQuery<{ status: string; attempts: number }>(
			`SELECT status, attempts FROM "${schema}".idempotency_keys WHERE scope = 'drill' AND key = $1`,
			[key],
		)
	)[0];

/** One write through the engine to a route; what the run told its watcher. */
async function writeOnce(route: string, key: string, ctx: WriteContext) {
	const body = { email: `${key}@drill.example` };
	const notices: string[] = [];
	const [outcome] = await runWrites(store, ctx, [write(key, body)], {
		send: fetchSender(target.url(route), () => body, TIMEOUT_MS),
		lookup: async (request) => {
			const [effect] = target.effectsOf(route, request.key);
			return effect
				? { kind: 'exists', answer: { status: 200, headers: {}, body: effect } }
				: { kind: 'absent' };
		},
		notice: (message) => notices.push(message),
	});
	return { outcome, notices };
}

describe('drill mode', () => {
	it('is switched on for 1 to 60 minutes by someone, and refused otherwise with what to do', async () => {
		for (const minutes of [0, 61, 1.5, 'ten'])
			await expect(
				startDrill(store, { integration: 'crm', actor: 'maria', minutes }),
			).rejects.toThrow(/lasts 1 to 60 minutes/);
		await expect(startDrill(store, { integration: 'crm', actor: '', minutes: 5 })).rejects.toThrow(
			DrillRefusedError,
		);
		const drill = await startDrill(store, {
			integration: 'crm',
			actor: 'maria',
			reason: 'pre-launch',
			minutes: 60,
		});
		const left = drill.expiresAt.getTime() - Date.now();
		expect(left).toBeGreaterThan(59 * 60_000);
		expect(left).toBeLessThanOrEqual(60 * 60_000 + 5_000);
		expect(
			await stopDrill(store, { integration: 'crm', actor: 'maria', reason: 'done' }),
		).toMatchObject({ integration: 'crm', active: false });
		expect(await stopDrill(store, { integration: 'crm', actor: 'maria' })).toBeUndefined();
		expect((await getDrill(store, 'crm'))?.active).toBe(false);
	});

	it('arming a timeout needs the drill on, and says where to switch it on', async () => {
		await expect(
			armForcedTimeout(store, {
				integration: 'billing',
				actor: 'drill',
				reason: 'test',
				event: 'lead',
				forMs: 60_000,
			}),
		).rejects.toMatchObject({
			message: 'Fire drill mode is off for integration billing',
			hint: expect.stringContaining('console (Controls, Fire drill)'),
		});
	});
});

describe('the forced timeout after commit', () => {
	beforeEach(async () => {
		await startDrill(store, { integration: 'crm', actor: 'maria', minutes: 10 });
		await armForcedTimeout(store, {
			integration: 'crm',
			actor: 'drill',
			reason: 'test',
			event: 'lead-',
			forMs: 60_000,
		});
	});
	afterEach(async () => {
		await stopDrill(store, { integration: 'crm', actor: 'maria' });
	});

	it('retry with the same key: the answer discarded after commit, resent with the key, one effect', async () => {
		const route = '/drill-retry';
		target.route(route, { honoursKey: true });
		const { outcome, notices } = await writeOnce(route, 'lead-1', context({ onUnknown: 'retry' }));
		expect(outcome.failure?.message ?? 'ok').toBe('ok');
		expect(target.effectsOf(route)).toHaveLength(1);
		expect(target.requestsTo(route)).toHaveLength(2);
		expect(await record('lead-1')).toEqual({ status: 'succeeded', attempts: 2 });
		expect(notices).toEqual([expect.stringContaining('Fire drill is on for integration crm')]);
		// Fired once, on this key, and on record.
		const drill = await getDrill(store, 'crm');
		expect(drill).toMatchObject({ timeoutArmed: false, firedScope: 'drill', firedKey: 'lead-1' });
		const { outcome: next } = await writeOnce(route, 'lead-2', context({ onUnknown: 'retry' }));
		expect(next.ok).toBe(true);
		expect(await record('lead-2')).toEqual({ status: 'succeeded', attempts: 1 });
		expect((await drillEvents(store, 'crm')).map((e) => e.action)).toEqual(
			expect.arrayContaining(['start', 'arm_timeout', 'fire_timeout']),
		);
	});

	it('reconcile by lookup: the effect found, nothing resent', async () => {
		const route = '/drill-lookup';
		target.route(route, { honoursKey: false });
		const { outcome } = await writeOnce(route, 'lead-3', context({ onUnknown: 'lookup' }));
		expect(outcome).toMatchObject({ ok: true });
		expect(target.effectsOf(route)).toHaveLength(1);
		expect(target.requestsTo(route)).toHaveLength(1);
		expect((await record('lead-3')).status).toBe('succeeded');
	});

	it('park for review: the item parked as unknown for a person, never sent twice', async () => {
		const route = '/drill-park';
		target.route(route, { honoursKey: false });
		const { outcome } = await writeOnce(route, 'lead-4', context({ onUnknown: 'park' }));
		expect(outcome.failure?.class).toBe('unknown_outcome');
		expect(target.requestsTo(route)).toHaveLength(1);
		expect((await record('lead-4')).status).toBe('unknown');
		const letters = await adminQuery(
			`SELECT error_class, integration, status FROM "${schema}".dead_letters WHERE id = $1`,
			[outcome.failure!.deadLetterId],
		);
		expect(letters).toEqual([
			{ error_class: 'unknown_outcome', integration: 'crm', status: 'new' },
		]);
	});

	it('another integration is untouched, and the drill stays armed for its own', async () => {
		const route = '/drill-other';
		target.route(route, { honoursKey: true });
		const { outcome, notices } = await writeOnce(
			route,
			'invoice-1',
			context({ integration: 'billing' }),
		);
		expect(outcome.failure?.message ?? 'ok').toBe('ok');
		expect(target.requestsTo(route)).toHaveLength(1);
		expect(notices).toEqual([]);
		expect((await getDrill(store, 'crm'))?.timeoutArmed).toBe(true);
	});

	it("a live write of the same integration, of another event, never takes the drill's timeout", async () => {
		const route = '/drill-live';
		target.route(route, { honoursKey: false });
		const { outcome, notices } = await writeOnce(route, 'order-9', context({ onUnknown: 'park' }));
		expect(outcome.failure?.message ?? 'ok').toBe('ok');
		expect(target.requestsTo(route)).toHaveLength(1);
		expect(await record('order-9')).toEqual({ status: 'succeeded', attempts: 1 });
		expect(notices).toEqual([expect.stringContaining('Fire drill is on for integration crm')]);
		expect((await getDrill(store, 'crm'))?.timeoutArmed).toBe(true);
	});

	it('a drill past its end fires nothing: it turned itself off', async () => {
		await adminQuery(
			`UPDATE "${schema}".drills SET expires_at = now() - interval '1 second' WHERE integration = 'crm'`,
		);
		const route = '/drill-ended';
		target.route(route, { honoursKey: true });
		const { outcome, notices } = await writeOnce(route, 'lead-5', context());
		expect(outcome.failure?.message ?? 'ok').toBe('ok');
		expect(target.requestsTo(route)).toHaveLength(1);
		expect(notices).toEqual([]);
		expect(await record('lead-5')).toEqual({ status: 'succeeded', attempts: 1 });
	});
});
