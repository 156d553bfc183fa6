import type { TestTarget } from '../../dev/target/server';
import {
	claimEvents,
	ClaimMode,
	failExecution,
	settleExecutionClaims,
	ExecutionEnd,
} from '../../lib/dedupe';
import { DEFAULT_POLICY, runWrites, type WriteContext } from '../../lib/idempotency';
import type { Store } from '../../lib/store';
import { fetchSender } from './send';
import { writeContext as engineWriteContext } from './writeContext';
import { writeRequest } from './writeRequest';

/**
 * Four invoices in the four places an operator asks about, made through the engine's own
 * functions against a real target: one in flight (claimed, its first step done, the execution
 * still running), one done, one parked (the ledger refused it), one crashed (its execution died
 * after its first step; nobody has recovered it yet).
 */
export const TRACED = {
	inFlight: 'INV-20931',
	done: 'INV-20932',
	parked: 'INV-20933',
	crashed: 'INV-20934',
} as const;

export const WORKFLOW_ID = 'wf-invoices';

export const claimContext = (executionId: string) => ({
	consumer: 'invoices',
	workflowId: WORKFLOW_ID,
	executionId,
	mode: ClaimMode.untilExecutionEnds,
	leaseSeconds: 600,
	retentionDays: 30,
});

export const writeContext = (executionId: string, node: string): WriteContext =>
	engineWriteContext({
		workflowId: WORKFLOW_ID,
		executionId,
		node,
		policy: { ...DEFAULT_POLICY, baseDelayMs: 20, maxDelayMs: 50, maxAttempts: 1 },
		concurrency: 1,
		runLink: `https://n8n.example.com/workflow/${WORKFLOW_ID}/executions/${executionId}`,
	});

/** One write of an invoice's step to the target, through the writer. */
export async function writeStep(
	store: Store,
	target: TestTarget,
	route: string,
	executionId: string,
	node: string,
	key: string,
	body: unknown,
) {
	return await runWrites(
		store,
		writeContext(executionId, node),
		[writeRequest({ scope: 'ledger', key, url: route, body })],
		{ send: fetchSender(target.url(route), () => body) },
	);
}

export async function seedTracedItems(
	store: Store,
	target: TestTarget,
	prefix = 'exec',
): Promise<void> {
	target.route('/stock', { honoursKey: true });
	target.route('/ledger', { honoursKey: true });
	target.route('/strict-ledger', { honoursKey: true });
	target.script('/strict-ledger', { status: 422, body: { message: 'account 4711 is closed' } });
	const invoice = (id: string) => ({ invoice: id, amount: 120 });
	const claim = async (id: string, executionId: string) =>
		await claimEvents(store, claimContext(executionId), [
			{ index: 0, eventId: id, payload: invoice(id) },
		]);

	// In flight: claimed, stock reserved, the ledger step not reached yet.
	await claim(TRACED.inFlight, `${prefix}-1`);
	await writeStep(
		store,
		target,
		'/stock',
		`${prefix}-1`,
		'Reserve Stock',
		`${TRACED.inFlight}:stock`,
		invoice(TRACED.inFlight),
	);

	// Done: posted to the ledger, the execution succeeded.
	await claim(TRACED.done, `${prefix}-2`);
	await writeStep(
		store,
		target,
		'/ledger',
		`${prefix}-2`,
		'Post to Ledger',
		`${TRACED.done}:post`,
		invoice(TRACED.done),
	);
	await settleExecutionClaims(store, `${prefix}-2`, { status: ExecutionEnd.success });

	// Parked: the ledger refused it (422), the writer parked it, the execution failed.
	await claim(TRACED.parked, `${prefix}-3`);
	await writeStep(
		store,
		target,
		'/strict-ledger',
		`${prefix}-3`,
		'Post to Ledger',
		`${TRACED.parked}:post`,
		invoice(TRACED.parked),
	);
	await settleExecutionClaims(store, `${prefix}-3`, {
		status: ExecutionEnd.error,
		message: 'Post to Ledger failed',
	});

	// Crashed: stock reserved, then n8n died; n8n's crash recovery reported it.
	await claim(TRACED.crashed, `${prefix}-4`);
	await writeStep(
		store,
		target,
		'/stock',
		`${prefix}-4`,
		'Reserve Stock',
		`${TRACED.crashed}:stock`,
		invoice(TRACED.crashed),
	);
	await failExecution(store, {
		executionId: `${prefix}-4`,
		crashed: true,
		message: 'Workflow did not finish, possible out-of-memory issue',
	});
}
