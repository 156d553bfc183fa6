import { getDeadLettersByKey } from '../../lib/deadletter';
import {
	claimEvents,
	ClaimMode,
	ExecutionEnd,
	failExecution,
	settleExecutionClaims,
} from '../../lib/dedupe';
import { adminQuery, testStore } from '../helpers/store';

/**
 * Every delivered item ends done, in an open dead letter that names it, or dropped by a named
 * rule: at the edges of n8n's execution lifecycle (a failed claim met again under Check Order,
 * an error whose text says "crash", a crash n8n reports twice, a cancelled execution).
 */
const { store, schema, cleanup } = testStore('item_accounting');
afterAll(cleanup);

let n = 0;
const context = (executionId = `exec-${++n}`) => ({
	consumer: 'orders',
	workflowId: 'wf-orders',
	executionId,
	mode: ClaimMode.untilExecutionEnds,
	leaseSeconds: 60,
	retentionDays: 30,
});
const order = (id: string, version?: number) => ({
	index: 0,
	eventId: id,
	payload: { order: id, amount: 40 },
	...(version === undefined ? {} : { entityKey: `customer-${id}`, version: String(version) }),
});
const claimRow = async (eventId: string) =>
	(
		await adminQuery<{ status: string; execution_id: string; payload: unknown }>(
			`SELECT status, execution_id, payload FROM "${schema}".processed_events WHERE consumer = 'orders' AND event_id = $1`,
			[eventId],
		)
	)[0];
const openLetters = async (eventId: string) =>
	(await getDeadLettersByKey(store, [`event:orders:${eventId}`])).filter((l) =>
		['new', 'held', 'replay_requested', 'being_fixed'].includes(l.status),
	);

describe('Check Order: a failed claim met again by its own redelivery', () => {
	it('is the retry of the same event, not a duplicate of itself: claimed again, item kept', async () => {
		const first = context();
		expect((await claimEvents(store, first, [order('ORD-1', 7)]))[0].outcome).toBe('new');
		await settleExecutionClaims(store, first.executionId, {
			status: ExecutionEnd.error,
			message: 'CRM said 503',
		});
		const again = context();
		const [redelivered] = await claimEvents(store, again, [order('ORD-1', 7)]);
		expect(redelivered.outcome).toBe('new');
		expect(await claimRow('ORD-1')).toMatchObject({
			status: 'in_progress',
			execution_id: again.executionId,
			payload: { order: 'ORD-1', amount: 40 },
		});
		// The error workflow of the first execution runs late: the item is the redelivery's now.
		const late = await failExecution(store, { executionId: first.executionId, crashed: false });
		expect(late.items).toEqual([]);
		expect(await claimRow('ORD-1')).toMatchObject({ status: 'in_progress' });
		// An older version of the entity is still stale, and the same version of another event a
		// duplicate: ordering itself is unchanged.
		const [older] = await claimEvents(store, context(), [
			{ ...order('ORD-1-old', 6), entityKey: 'customer-ORD-1' },
		]);
		expect(older.outcome).toBe('stale');
		const [same] = await claimEvents(store, context(), [
			{ ...order('ORD-1-same', 7), entityKey: 'customer-ORD-1' },
		]);
		expect(same).toMatchObject({ outcome: 'duplicate', reason: 'same_version' });
	});

	it('a dead owner whose lease lapsed: the redelivery takes the item over', async () => {
		const dead = { ...context(), leaseSeconds: 1 };
		await claimEvents(store, dead, [order('ORD-2', 3)]);
		await adminQuery(
			`UPDATE "${schema}".processed_events SET lease_until = now() - interval '1 second' WHERE event_id = 'ORD-2'`,
		);
		const again = context();
		expect((await claimEvents(store, again, [order('ORD-2', 3)]))[0].outcome).toBe('new');
		expect(await claimRow('ORD-2')).toMatchObject({ execution_id: again.executionId });
		expect(await openLetters('ORD-2')).toEqual([]);
	});
});
