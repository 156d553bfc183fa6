import type { INodeExecutionData } from 'n8n-workflow';
import { fileTarget } from '../helpers/target';
import { handleConsoleRequest } from '../../lib/console';
import { claimEvents, ClaimMode, ExecutionEnd, settleExecutionClaims } from '../../lib/dedupe';
import { businessKey, runWrites } from '../../lib/idempotency';
import { updateDeadLetterStatus } from '../../lib/deadletter';
import {
	type ClaimEntry,
	type DeadLetterEntry,
	traceItem,
	type TraceEntry,
	TraceEntryKind,
	TraceState,
	type WriteEntry,
} from '../../lib/trace';
import { execute as traceOperation } from '../../nodes/ReliabilityControl/actions/item/trace.operation';
import {
	claimContext,
	seedTracedItems,
	TRACED,
	WORKFLOW_ID,
	writeContext,
	writeStep,
} from '../helpers/traceItems';
import { fetchSender } from '../helpers/send';
import { adminQuery, testStore } from '../helpers/store';
import { parkAll } from '../helpers/park';
import { executeFunctions } from '../helpers/executeFunctions';
import { writeRequest } from '../helpers/writeRequest';
import { sleep } from '../helpers/sleep';

/**
 * Trace answers "where is item X?" from the records the nodes really write: claims, write keys
 * and dead letters, found by the whole ID or a part of it, as one timeline oldest first.
 */
const { store, schema, cleanup } = testStore('trace');
const target = fileTarget();
const BASE = 'https://n8n.example.com';
beforeAll(() => seedTracedItems(store, target));
afterAll(cleanup);

const trace = (id: string) => traceItem(store, id, { baseUrl: BASE });
const ofKind = <K extends TraceEntry['kind']>(entries: TraceEntry[], kind: K) =>
	entries.filter((e): e is Extract<TraceEntry, { kind: K }> => e.kind === kind);
const link = (execution: string) => `${BASE}/workflow/${WORKFLOW_ID}/executions/${execution}`;

describe('an item in each place an operator asks about', () => {
	it('in flight: its claim is held by the running execution, its first step is done', async () => {
		const result = await trace(TRACED.inFlight);
		expect(result).toMatchObject({ match: 'exact', state: TraceState.inFlight, truncated: false });
		const [claim] = ofKind(result.entries, 'claim');
		expect(claim).toMatchObject<Partial<ClaimEntry>>({
			consumer: 'invoices',
			eventId: TRACED.inFlight,
			status: 'in_progress',
			state: 'in_flight',
			executionId: 'exec-1',
			executionLink: link('exec-1'),
			itemKept: true,
			matched: 'exact',
		});
		expect(new Date(claim.leaseUntil).getTime()).toBeGreaterThan(Date.now());
		const [write] = ofKind(result.entries, 'write');
		expect(write).toMatchObject<Partial<WriteEntry>>({
			step: 'Reserve Stock',
			key: `${TRACED.inFlight}:stock`,
			status: 'succeeded',
			state: 'done',
			attempts: 1,
			response: { status: 201, bytes: expect.any(Number) as number, truncated: false },
			matched: 'part',
		});
		expect(write.response!.bytes).toBeGreaterThan(0);
		expect(write.history).toEqual([expect.objectContaining({ attempt: 1, status: 201 })]);
		// Oldest first: the claim came before its step.
		expect(result.entries.map((e) => e.kind)).toEqual([TraceEntryKind.claim, TraceEntryKind.write]);
	});

	it('done: the claim is done and the ledger post succeeded', async () => {
		const result = await trace(TRACED.done);
		expect(result.state).toBe('done');
		expect(ofKind(result.entries, 'claim')[0]).toMatchObject({ status: 'done', state: 'done' });
		expect(ofKind(result.entries, 'write')[0]).toMatchObject({
			step: 'Post to Ledger',
			state: 'done',
			response: { status: 201 },
		});
		expect(ofKind(result.entries, 'dead_letter')).toEqual([]);
	});

	it('parked: the refused write, its dead letter with history and the failed claim', async () => {
		const result = await trace(TRACED.parked);
		expect(result.state).toBe('parked');
		expect(result.entries.map((e) => e.kind)).toEqual(['claim', 'write', 'dead_letter']);
		expect(ofKind(result.entries, 'claim')[0]).toMatchObject({ status: 'failed', state: 'failed' });
		expect(ofKind(result.entries, 'write')[0]).toMatchObject({
			status: 'failed',
			attempts: 1,
			response: { status: 422 },
			lastError: expect.stringContaining('account 4711 is closed') as string,
		});
		const [letter] = ofKind(result.entries, 'dead_letter');
		expect(letter).toMatchObject<Partial<DeadLetterEntry>>({
			status: 'new',
			state: 'parked',
			errorClass: 'permanent',
			idempotencyKey: `${TRACED.parked}:post`,
			executionLink: link('exec-3'),
		});
		expect(letter.message).toContain('account 4711 is closed');
		expect(letter.history).toEqual([expect.objectContaining({ actor: 'n8n', toStatus: 'new' })]);
	});

	it('parked though its claim is done: a write keyed by a hash of its business identity is found by its record ID', async () => {
		// The lead's execution succeeded (its failure went to the Failed output), so its claim is done.
		const lead = 'fail422-b2';
		target.route('/crm-contacts', { honoursKey: false });
		target.script('/crm-contacts', { status: 422, body: { message: 'phone: invalid format' } });
		await claimEvents(store, { ...claimContext('exec-hash'), consumer: 'leads' }, [
			{ index: 0, eventId: lead, payload: { lead } },
		]);
		const key = businessKey({
			source: 'form',
			recordId: lead,
			action: 'create-contact',
			version: '1',
		});
		const body = { lead };
		const [outcome] = await runWrites(
			store,
			{ ...writeContext('exec-hash', 'Upsert Contact') },
			[writeRequest({ scope: 'crm', key, url: '/crm-contacts', body, businessId: lead })],
			{ send: fetchSender(target.url('/crm-contacts'), () => body) },
		);
		expect(outcome.ok).toBe(false);
		await settleExecutionClaims(store, 'exec-hash', { status: ExecutionEnd.success });

		const result = await trace(lead);
		expect(result.state).toBe('parked');
		expect(result.entries.map((e) => [e.kind, e.state])).toEqual([
			['claim', 'done'],
			['write', 'failed'],
			['dead_letter', 'parked'],
		]);
		expect(ofKind(result.entries, 'write')[0]).toMatchObject({ key, matched: 'exact' });
		expect(ofKind(result.entries, 'dead_letter')[0]).toMatchObject({ idempotencyKey: key });
	});

	it('crashed: the claim its dead execution held has lapsed, and what it did before is shown', async () => {
		const result = await trace(TRACED.crashed);
		expect(result.state).toBe('crashed');
		expect(ofKind(result.entries, 'claim')[0]).toMatchObject({
			status: 'in_progress',
			state: 'crashed',
			executionId: 'exec-4',
			originExecutionId: 'exec-4',
			lastError: 'Workflow did not finish, possible out-of-memory issue',
			itemKept: true,
		});
		expect(ofKind(result.entries, 'write')[0]).toMatchObject({
			step: 'Reserve Stock',
			state: 'done',
		});
	});
});

describe('matching', () => {
	it('by a part of the ID, case-insensitive, every item containing it', async () => {
		const result = await trace('inv-2093');
		expect(result.match).toBe('part');
		expect(new Set(ofKind(result.entries, 'claim').map((c) => c.eventId))).toEqual(
			new Set(Object.values(TRACED)),
		);
		expect(ofKind(result.entries, 'dead_letter')).toHaveLength(1);
		const at = result.entries.map((e) => e.at);
		expect([...at].sort()).toEqual(at);
	});

	it('by a whole write key: that key and its dead letter, no claim carries it', async () => {
		const result = await trace(`${TRACED.parked}:post`);
		expect(result.match).toBe('exact');
		expect(ofKind(result.entries, 'write').map((w) => w.key)).toEqual([`${TRACED.parked}:post`]);
		expect(ofKind(result.entries, 'dead_letter')).toHaveLength(1);
		expect(ofKind(result.entries, 'claim')).toEqual([]);
	});

	it('wildcards in the search are literal, and a short part matches only exactly', async () => {
		expect((await trace('INV_2093')).match).toBe('none');
		expect((await trace('%')).entries).toEqual([]);
		expect((await trace('IN')).match).toBe('none');
	});

	it('a business ID nobody has seen is an empty answer, not an error', async () => {
		expect(await trace('INV-99999')).toMatchObject({ match: 'none', state: null, entries: [] });
		await expect(traceItem(store, '  ')).rejects.toThrow('Trace needs a business ID');
	});

	it('a pasted log line with a credential is searched, but its answer names it masked', async () => {
		// Found by check:fuzz: the answer echoed the query, and goes into n8n's execution data.
		const answer = await traceItem(store, 'retry failed: Authorization=Bearer sk_live_51Hx9');
		expect(answer.match).toBe('none');
		expect(JSON.stringify(answer)).not.toContain('sk_live_51Hx9');
		expect(answer.query).toMatch(/^retry failed: Authorization=/);
		const page = await handleConsoleRequest(store, {
			headers: { authorization: `Basic ${Buffer.from('maria:pw').toString('base64')}` },
			query: { view: 'trace', q: 'retry failed: Authorization=Bearer sk_live_51Hx9' },
		});
		expect(page.statusCode).toBe(200);
		expect(page.body).not.toContain('sk_live_51Hx9');
	});

	it('a write in flight shows as in flight while its request is out', async () => {
		target.route('/slow-ledger', { honoursKey: true, latencyMs: 1_500 });
		await claimEvents(
			store,
			{
				consumer: 'invoices',
				workflowId: WORKFLOW_ID,
				executionId: 'exec-slow',
				mode: ClaimMode.untilExecutionEnds,
				leaseSeconds: 600,
				retentionDays: 30,
			},
			[{ index: 0, eventId: 'INV-30001', payload: { invoice: 'INV-30001' } }],
		);
		const writing = writeStep(
			store,
			target,
			'/slow-ledger',
			'exec-slow',
			'Post to Ledger',
			'INV-30001:post',
			{ invoice: 'INV-30001' },
		);
		await sleep(500);
		const during = await trace('INV-30001');
		expect(ofKind(during.entries, 'write')[0]).toMatchObject({
			status: 'in_progress',
			state: 'in_flight',
			attempts: 1,
			response: null,
		});
		await writing;
		expect(ofKind((await trace('INV-30001')).entries, 'write')[0].state).toBe('done');
	});

	it('a recovered crash parked as crashed, then resolved, shows its whole history', async () => {
		const [parked] = await parkAll(store, [
			{
				workflowId: WORKFLOW_ID,
				executionId: 'exec-40',
				step: 'crashed',
				idempotencyKey: 'event:invoices:INV-40001',
				errorClass: 'crashed',
				errorMessage: 'given up after 3 recoveries (event INV-40001 of invoices)',
				payload: { invoice: 'INV-40001', token: 'sk_live_abc' },
			},
		]);
		await updateDeadLetterStatus(store, {
			id: parked.id,
			to: 'resolved',
			actor: 'maria@example.com',
			reason: 'posted by hand',
		});
		const result = await trace('INV-40001');
		expect(result).toMatchObject({ match: 'part', state: 'closed' });
		const [letter] = ofKind(result.entries, 'dead_letter');
		expect(letter.history.map((h) => [h.actor, h.toStatus])).toEqual([
			['n8n', 'new'],
			['maria@example.com', 'resolved'],
		]);
		// No run link was stored: the link is built from the workflow and the execution.
		expect(letter.executionLink).toBe(link('exec-40'));
	});

	it('more records than the limit: the newest are kept and the answer says so', async () => {
		await adminQuery(
			`INSERT INTO "${schema}".processed_events (consumer, event_id, status, lease_until, expires_at, claimed_at)
			 SELECT 'bulk', 'BULK-' || g, 'done', now(), now() + interval '1 day', now() - make_interval(secs => 1000 - g)
			 FROM generate_series(1, 30) g`,
		);
		const result = await traceItem(store, 'BULK-', { limit: 10 });
		expect(result.truncated).toBe(true);
		expect(result.entries.map((e) => (e as ClaimEntry).eventId)).toEqual(
			Array.from({ length: 10 }, (_, i) => `BULK-${21 + i}`),
		);
	});
});

describe('Reliability Control Item > Trace', () => {
	/** A stand-in for n8n: each item's Business ID, Continue On Fail, the instance's base URL. */
	const context = (continueOnFail: boolean, items: INodeExecutionData[]) =>
		executeFunctions({
			name: 'Trace',
			type: 'n8n-nodes-reliability.reliabilityControl',
			instanceBaseUrl: `${BASE}/`,
			continueOnFail,
			parameter: (name, index, fallback) =>
				name === 'businessId' ? items[index].json.id : fallback,
		});

	it('one trace per item, paired with it; an empty ID is the error of that item under Continue On Fail', async () => {
		const items = [{ json: { id: TRACED.parked } }, { json: { id: '' } }];
		const [out] = await traceOperation.call(context(true, items), store, items);
		expect(out.map((o) => o.pairedItem)).toEqual([{ item: 0 }, { item: 1 }]);
		expect(out[0].json).toMatchObject({ query: TRACED.parked, state: 'parked', truncated: false });
		expect((out[0].json.entries as TraceEntry[])[0].executionLink).toBe(link('exec-3'));
		expect(out[1].json).toMatchObject({ error: 'Trace needs a business ID', itemIndex: 1 });
	});

	it('without Continue On Fail, the bad item fails the run with its index', async () => {
		const items = [{ json: { id: TRACED.done } }, { json: { id: ' ' } }];
		await expect(traceOperation.call(context(false, items), store, items)).rejects.toMatchObject({
			message: 'Trace needs a business ID',
			context: { itemIndex: 1 },
		});
	});
});

describe('the console page "Find an item"', () => {
	const page = async (q: string) =>
		await handleConsoleRequest(
			store,
			{ query: { view: 'trace', q }, headers: {} },
			{ baseUrl: BASE },
		);

	it('shows the timeline with each state, links to the executions and to the dead letter', async () => {
		const response = await page(TRACED.parked);
		expect(response.statusCode).toBe(200);
		expect(response.body).toContain('name="q" value="INV-20933"');
		expect(response.body).toMatch(/data-kind="claim" data-state="failed"/);
		expect(response.body).toMatch(/data-kind="write" data-state="failed"/);
		expect(response.body).toMatch(/data-kind="dead_letter" data-state="parked"/);
		expect(response.body).toContain(`href="${link('exec-3')}"`);
		expect(response.body).toMatch(/href="\?view=item&amp;id=\d+"/);
		expect((await page(TRACED.crashed)).body).toContain('class="state state-crashed"');
		expect((await page('INV-99999')).body).toContain('Nothing in the store carries');
	});

	it('escapes what it shows and masks secrets a record stored by an older version carries', async () => {
		const canary = 'cAnArY-tr4ce';
		await adminQuery(
			`INSERT INTO "${schema}".processed_events (consumer, event_id, status, lease_until, expires_at, last_error)
			 VALUES ('<b>hooks</b>', 'INV-50001<script>alert(1)</script>', 'failed', now(), now() + interval '1 day', $1)`,
			[`401 Unauthorized: Authorization: Bearer ${canary}`],
		);
		const response = await page('INV-50001<script>');
		expect(response.body).not.toContain('<script>alert(1)');
		expect(response.body).not.toContain('<b>hooks');
		expect(response.body).toContain('INV-50001&lt;script&gt;alert(1)&lt;/script&gt;');
		expect(response.body).toContain('data-kind="claim"');
		expect(response.body).not.toContain(canary);
		expect(response.body).toContain('Authorization: [masked]');
	});
});
