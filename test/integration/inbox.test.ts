import { getDeadLettersByKey } from '../../lib/deadletter';
import {
	claimEvents,
	ClaimMode,
	completeEvents,
	ExecutionEnd,
	failExecution,
	keeperFor,
	releaseExecutionClaims,
	settleExecutionClaims,
	takeCrashed,
} from '../../lib/dedupe';
import { DEFAULT_POLICY, runWrites } from '../../lib/idempotency';
import { adminQuery, testStore } from '../helpers/store';
import { writeRequest } from '../helpers/writeRequest';
import { writeContext } from '../helpers/writeContext';
import { sleep } from '../helpers/sleep';

/**
 * The durable inbox: a claim made until the execution ends keeps its item, is settled by how the
 * execution ended, and when the execution dies, is taken over by Recover, re-run a few times,
 * then given up to be parked.
 */
const { store, schema, cleanup } = testStore('inbox');
afterAll(cleanup);

let n = 0;
const context = (executionId = `exec-${++n}`, leaseSeconds = 60) => ({
	consumer: 'invoices',
	workflowId: 'wf-invoices',
	executionId,
	mode: ClaimMode.untilExecutionEnds,
	leaseSeconds,
	retentionDays: 30,
});
const invoice = (id: string, index = 0) => ({
	index,
	eventId: id,
	payload: { invoice: id, amount: 120 },
});
const row = async (eventId: string) =>
	(
		await adminQuery<{
			status: string;
			payload: unknown;
			execution_id: string;
			recover_attempts: number;
			lease_until: Date;
		}>(
			`SELECT status, payload, execution_id, recover_attempts, lease_until FROM "${schema}".processed_events WHERE event_id = $1`,
			[eventId],
		)
	)[0];

describe('the inbox keeps the item with its claim', () => {
	it('a claim holds the item until the execution ends; success completes it for good', async () => {
		const ctx = context();
		const [claimed] = await claimEvents(store, ctx, [invoice('INV-1')]);
		expect(claimed.outcome).toBe('new');
		expect(await row('INV-1')).toMatchObject({
			status: 'in_progress',
			payload: { invoice: 'INV-1', amount: 120 },
		});
		await settleExecutionClaims(store, ctx.executionId, { status: ExecutionEnd.success });
		expect((await row('INV-1')).status).toBe('done');
		expect(await releaseExecutionClaims(store, ctx.executionId)).toBe(0);
		expect((await claimEvents(store, context(), [invoice('INV-1')]))[0]).toMatchObject({
			outcome: 'duplicate',
			reason: 'done',
		});
	});

	it('a failed execution leaves its items failed: a redelivery is new, the error workflow gets the items', async () => {
		const ctx = context();
		await claimEvents(store, ctx, [invoice('INV-2')]);
		await settleExecutionClaims(store, ctx.executionId, {
			status: ExecutionEnd.error,
			message: 'ledger said 500',
		});
		const failed = await failExecution(store, { executionId: ctx.executionId, crashed: false });
		expect(failed.items).toEqual([
			expect.objectContaining({
				eventId: 'INV-2',
				payload: { invoice: 'INV-2', amount: 120 },
				workflowId: 'wf-invoices',
			}),
		]);
		expect((await claimEvents(store, context(), [invoice('INV-2')]))[0].outcome).toBe('new');
	});

	it('the keeper renews the claims of the executions running here, in one statement', async () => {
		const ctx = context(`exec-kept-${++n}`, 2);
		await claimEvents(store, ctx, [invoice('INV-3')]);
		const keeper = keeperFor(store, 2);
		keeper.keep(ctx.executionId, 60_000);
		const before = (await row('INV-3')).lease_until;
		await sleep(1_100);
		await keeper.beat();
		expect((await row('INV-3')).lease_until.getTime()).toBeGreaterThan(before.getTime());
		keeper.drop(ctx.executionId);
	});
});

describe('an execution that died', () => {
	it('its item is re-run by Recover (fenced), then given up after the attempts, never lost', async () => {
		const dead = context(`exec-dead-${++n}`);
		await claimEvents(store, dead, [invoice('INV-9')]);
		// Its write step had sent: the key stays in progress until the crash is known.
		await runWrites(
			store,
			writeContext({
				workflowId: 'wf-invoices',
				executionId: dead.executionId,
				node: 'Post to Ledger',
				policy: DEFAULT_POLICY,
				concurrency: 1,
				maxSavedBodyChars: 1000,
			}),
			[writeRequest({ scope: 'ledger', key: 'INV-9:post', url: '/l', body: {} })],
			{
				send: async () => ({
					kind: 'response',
					answer: { status: 201, headers: {}, body: { id: 1 } },
				}),
			},
		);
		// n8n marks the execution crashed and runs the error workflow: Recover may take it at once.
		const crashed = await failExecution(store, {
			executionId: dead.executionId,
			crashed: true,
			message: 'Workflow did not finish',
		});
		expect(crashed).toMatchObject({ items: [], recovering: 1 });

		const [first, second] = await Promise.all([
			takeCrashed(store, {
				executionId: 'recover-1',
				limit: 10,
				maxAttempts: 2,
				leaseSeconds: 60,
				workflowId: 'wf-invoices',
			}),
			takeCrashed(store, {
				executionId: 'recover-2',
				limit: 10,
				maxAttempts: 2,
				leaseSeconds: 60,
				workflowId: 'wf-invoices',
			}),
		]);
		const taken = [...first, ...second];
		expect(taken).toHaveLength(1);
		expect(taken[0]).toMatchObject({
			eventId: 'INV-9',
			payload: { invoice: 'INV-9', amount: 120 },
			originExecutionId: dead.executionId,
			attempt: 1,
			givenUp: false,
			steps: [{ step: 'Post to Ledger', status: 'succeeded' }],
		});
		// The recovery run dies too; its lease ends; the next one takes it, then gives it up.
		await adminQuery(
			`UPDATE "${schema}".processed_events SET lease_until = now() - interval '1 second' WHERE event_id = 'INV-9'`,
		);
		const [again] = await takeCrashed(store, {
			executionId: 'recover-3',
			limit: 10,
			maxAttempts: 2,
			leaseSeconds: 60,
			workflowId: 'wf-invoices',
		});
		expect(again).toMatchObject({ attempt: 2, givenUp: false });
		// A late Complete by the first recoverer changes nothing.
		expect(
			(
				await completeEvents(
					store,
					'invoices',
					['INV-9'],
					taken[0] === first[0] ? 'recover-1' : 'recover-2',
				)
			)[0].changed,
		).toBe(false);
		await adminQuery(
			`UPDATE "${schema}".processed_events SET lease_until = now() - interval '1 second' WHERE event_id = 'INV-9'`,
		);
		const [given] = await takeCrashed(store, {
			executionId: 'recover-4',
			limit: 10,
			maxAttempts: 2,
			leaseSeconds: 60,
			workflowId: 'wf-invoices',
		});
		expect(given).toMatchObject({
			givenUp: true,
			reason: 'given up after 2 recoveries',
			payload: { invoice: 'INV-9', amount: 120 },
		});
		expect((await row('INV-9')).status).toBe('failed');
		expect(await getDeadLettersByKey(store, ['INV-9:post'])).toEqual([]);
	});

	it('its in-progress write keys are marked at once: failed if nothing was sent, unknown if it was', async () => {
		const dead = `exec-keys-${++n}`;
		await adminQuery(
			`INSERT INTO "${schema}".idempotency_keys (scope, key, fingerprint, status, lease_until, execution_id, expires_at, attempts)
			 VALUES ('ledger', 'k-sent', 'f', 'in_progress', now() + interval '1 hour', $1, now() + interval '1 day', 1),
			        ('ledger', 'k-queued', 'f', 'in_progress', now() + interval '1 hour', $1, now() + interval '1 day', 0)`,
			[dead],
		);
		const { keys } = await failExecution(store, { executionId: dead, crashed: true });
		expect(keys.sort((a, b) => a.key.localeCompare(b.key))).toEqual([
			{ scope: 'ledger', key: 'k-queued', status: 'failed' },
			{ scope: 'ledger', key: 'k-sent', status: 'unknown' },
		]);
	});
});
