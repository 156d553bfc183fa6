import {
	getDeadLetters,
	type ParkRequest,
	returnUnsettledTakes,
	settleUnsettledTakes,
	StatusChangeRefusedError,
	takeForReplay,
	updateDeadLetterStatus,
} from '../../lib/deadletter';
import {
	claimEvents,
	ClaimMode,
	eventLetterKey,
	settleExecutionClaims,
	ExecutionEnd,
} from '../../lib/dedupe';
import { DEFAULT_POLICY, runWrites } from '../../lib/idempotency';
import { Store } from '../../lib/store';
import { adminQuery, storeConfig, testStore } from '../helpers/store';
import { parkAll } from '../helpers/park';
import { writeRequest } from '../helpers/writeRequest';
import { writeContext } from '../helpers/writeContext';

/**
 * Dead-letter status changes are guarded: from-states that lead there, a take's generation, an
 * atomic take for replay, a failed replay back in the review queue, an audit trail that keeps
 * every event.
 */
const { store, schema, cleanup } = testStore('dlproto');
afterAll(cleanup);

let n = 0;
const failed = (overrides: Partial<ParkRequest> = {}): ParkRequest => ({
	workflowId: 'wf-dl',
	step: 'Post',
	idempotencyKey: `key-${++n}`,
	errorClass: 'permanent',
	errorMessage: 'rejected',
	payload: { n },
	...overrides,
});

describe('status changes are guarded', () => {
	it('a closed record is never reopened by a replay request, and says why', async () => {
		const [parked] = await parkAll(store, [failed()]);
		await updateDeadLetterStatus(store, {
			id: parked.id,
			to: 'resolved',
			actor: 'maria',
			reason: 'fixed by hand',
		});
		// A newer failure of the same item is a new open record; the old one stays closed.
		const [again] = await parkAll(store, [failed({ idempotencyKey: `key-${n}` })]);
		expect(again.id).not.toBe(parked.id);
		await expect(
			updateDeadLetterStatus(store, { id: parked.id, to: 'replay_requested', actor: 'bob' }),
		).rejects.toThrow(
			new StatusChangeRefusedError(
				`Dead letter ${parked.id} is resolved (closed): it cannot move to replay_requested`,
			),
		);
		const [record] = await getDeadLetters(store, [parked.id]);
		expect(record.status).toBe('resolved');
	});

	it('a change made for an older generation changes nothing', async () => {
		const [parked] = await parkAll(store, [failed()]);
		const first = await updateDeadLetterStatus(store, {
			id: parked.id,
			to: 'being_fixed',
			actor: 'maria',
		});
		await updateDeadLetterStatus(store, {
			id: parked.id,
			to: 'new',
			actor: 'bob',
			reason: 'not mine',
		});
		await expect(
			updateDeadLetterStatus(store, {
				id: parked.id,
				to: 'replayed',
				actor: 'maria',
				expectedGeneration: first.generation,
			}),
		).rejects.toThrow(/was changed meanwhile \(now new\)/);
	});
});

describe('take for replay', () => {
	it('two overlapping replay runs never take one record', async () => {
		const parked = await parkAll(
			store,
			Array.from({ length: 30 }, () => failed({ workflowId: 'wf-race' })),
		);
		for (const p of parked)
			await updateDeadLetterStatus(store, { id: p.id, to: 'replay_requested', actor: 'ops' });
		const runners = Array.from({ length: 4 }, () => new Store(storeConfig(schema)));
		try {
			const takes = await Promise.all(
				runners.map((r, i) =>
					takeForReplay(r, { taker: `replay ${i}`, limit: 10, workflowId: 'wf-race' }),
				),
			);
			const ids = takes.flat().map((t) => t.id);
			expect(ids).toHaveLength(30);
			expect(new Set(ids).size).toBe(30);
		} finally {
			await Promise.all(runners.map((r) => r.close()));
		}
	});

	it('a replay that fails again puts the record back in the review queue', async () => {
		const request = failed({ workflowId: 'wf-refail' });
		const [parked] = await parkAll(store, [request]);
		await updateDeadLetterStatus(store, { id: parked.id, to: 'replay_requested', actor: 'ops' });
		const [taken] = await takeForReplay(store, {
			taker: 'replay',
			limit: 5,
			workflowId: 'wf-refail',
		});
		expect(taken).toMatchObject({ id: parked.id, status: 'being_fixed' });
		// The re-run fails at the same step and parks the item again.
		const [again] = await parkAll(store, [{ ...request, errorMessage: 'rejected again' }]);
		expect(again).toMatchObject({ id: parked.id, status: 'new', created: false });
		const [record] = await getDeadLetters(store, [parked.id]);
		expect(record.history.at(-1)).toMatchObject({
			fromStatus: 'being_fixed',
			toStatus: 'new',
			reason: 'rejected again',
		});
		// The replay run's own settle comes too late and changes nothing.
		await expect(
			updateDeadLetterStatus(store, {
				id: parked.id,
				to: 'replayed',
				actor: 'replay',
				expectedGeneration: taken.generation,
			}),
		).rejects.toThrow(/changed meanwhile/);
	});

	it('a replay run that ends without success asks again for what it did not settle, and only that', async () => {
		const parked = await parkAll(store, [
			failed({ workflowId: 'wf-stopped-run' }),
			failed({ workflowId: 'wf-stopped-run' }),
			failed({ workflowId: 'wf-stopped-run' }),
		]);
		for (const record of parked)
			await updateDeadLetterStatus(store, { id: record.id, to: 'replay_requested', actor: 'ops' });
		const taken = await takeForReplay(store, {
			taker: 'replay workflow (execution 41)',
			limit: 5,
			workflowId: 'wf-stopped-run',
		});
		expect(taken).toHaveLength(3);
		const [settled, personal, left] = taken;
		// The run settled one record before it was stopped; a person moved another meanwhile.
		await updateDeadLetterStatus(store, {
			id: settled.id,
			to: 'replayed',
			actor: 'replay workflow (execution 41)',
			expectedGeneration: settled.generation,
		});
		await updateDeadLetterStatus(store, { id: personal.id, to: 'new', actor: 'maria' });
		const returned = await returnUnsettledTakes(store, taken, {
			actor: 'replay workflow (execution 41)',
			reason: 'the replay run ended canceled before it settled this record: asked for replay again',
		});
		expect(returned).toEqual([left.id]);
		const records = await getDeadLetters(store, [settled.id, personal.id, left.id]);
		const statusOf = (id: string) => records.find((r) => r.id === id)?.status;
		expect([statusOf(settled.id), statusOf(personal.id), statusOf(left.id)]).toEqual([
			'replayed',
			'new',
			'replay_requested',
		]);
		expect(records.find((r) => r.id === left.id)!.history.at(-1)).toMatchObject({
			fromStatus: 'being_fixed',
			toStatus: 'replay_requested',
			reason: expect.stringContaining('ended canceled'),
		});
		// The next replay run takes it at once, not after the retake time.
		const [again] = await takeForReplay(store, {
			taker: 'replay workflow (execution 42)',
			limit: 5,
			workflowId: 'wf-stopped-run',
		});
		expect(again.id).toBe(left.id);
	});

	it('a replay run that ends in success settles what its re-runs left unread, by what the store says of each failed step', async () => {
		const workflowId = 'wf-lead-replay';
		// The write keys the re-runs ended with: Enrich now succeeded, Upsert still failed.
		const writeKey = async (key: string, status: 200 | 422) =>
			await runWrites(
				store,
				writeContext({
					workflowId,
					executionId: `replayed-run-${key}`,
					node: key.endsWith(':enrich') ? 'Enrich' : 'Upsert Contact',
					policy: { ...DEFAULT_POLICY, maxAttempts: 1 },
					concurrency: 1,
					maxSavedBodyChars: 1000,
					park: false,
				}),
				[writeRequest({ scope: 'crm', key, url: '/x', body: { key }, timeoutMs: 1000 })],
				{
					send: async () => ({
						kind: 'response',
						answer: {
							status,
							headers: {},
							body: status === 200 ? { ok: true } : { error: 'bad phone' },
						},
					}),
				},
			);
		// A lead whose done event closes an event letter; one whose claim failed again.
		const claimed = async (eventId: string, end: 'success' | 'error') => {
			const run = {
				consumer: 'leads',
				workflowId,
				executionId: `replayed-${eventId}`,
				mode: ClaimMode.untilExecutionEnds,
				leaseSeconds: 60,
				retentionDays: 30,
			};
			await claimEvents(store, run, [{ index: 0, eventId, payload: { eventId } }]);
			await settleExecutionClaims(store, run.executionId, {
				status: end === 'success' ? ExecutionEnd.success : ExecutionEnd.error,
			});
		};
		const [enrich, upsert, eventDone, eventFailed, custom] = await parkAll(store, [
			failed({
				workflowId,
				step: 'Enrich',
				idempotencyKey: 'lead-7:enrich',
				errorClass: 'unknown_outcome',
			}),
			failed({
				workflowId,
				step: 'Upsert Contact',
				idempotencyKey: 'lead-8:crm-upsert',
				errorClass: 'exhausted',
			}),
			failed({
				workflowId,
				step: 'Claim',
				idempotencyKey: eventLetterKey('leads', 'ev-9'),
				businessId: 'ev-9',
				errorClass: 'execution',
			}),
			failed({
				workflowId,
				step: 'Claim',
				idempotencyKey: eventLetterKey('leads', 'ev-10'),
				businessId: 'ev-10',
				errorClass: 'execution',
			}),
			failed({ workflowId, step: 'Notify', idempotencyKey: 'my-own-key-11' }),
		]);
		for (const record of [enrich, upsert, eventDone, eventFailed, custom])
			await updateDeadLetterStatus(store, { id: record.id, to: 'replay_requested', actor: 'ops' });
		const taken = await takeForReplay(store, {
			taker: 'replay workflow (execution 77)',
			limit: 10,
			workflowId,
		});
		expect(taken).toHaveLength(5);
		// The re-runs: Enrich passed and a later step failed elsewhere; the upsert failed again
		// without parking this letter; one event was done, one failed; the custom one finished.
		await writeKey('lead-7:enrich', 200);
		await writeKey('lead-8:crm-upsert', 422);
		await claimed('ev-9', 'success');
		await claimed('ev-10', 'error');
		const settled = await settleUnsettledTakes(
			store,
			taken.map((t) => ({ id: t.id, generation: t.generation })),
			'replay workflow (execution 77)',
		);
		const records = await getDeadLetters(
			store,
			[enrich, upsert, eventDone, eventFailed, custom].map((r) => r.id),
		);
		const statusOf = (id: string) => records.find((r) => r.id === id)?.status;
		expect([enrich, upsert, eventDone, eventFailed, custom].map((r) => statusOf(r.id))).toEqual([
			'replayed',
			'new',
			'replayed',
			'new',
			'replayed',
		]);
		expect(settled).toHaveLength(5);
		expect(records.find((r) => r.id === upsert.id)!.history.at(-1)).toMatchObject({
			fromStatus: 'being_fixed',
			toStatus: 'new',
			reason: expect.stringContaining(
				'without Upsert Contact succeeding (its write key is failed)',
			),
		});
		// A second end (n8n reporting again) changes nothing.
		expect(
			await settleUnsettledTakes(
				store,
				taken.map((t) => ({ id: t.id, generation: t.generation })),
				'again',
			),
		).toEqual([]);
	});

	it('a record taken by a replay run that died is taken again after the retake time', async () => {
		const [parked] = await parkAll(store, [failed({ workflowId: 'wf-dead-run' })]);
		await updateDeadLetterStatus(store, { id: parked.id, to: 'replay_requested', actor: 'ops' });
		const [first] = await takeForReplay(store, {
			taker: 'run that dies',
			limit: 5,
			workflowId: 'wf-dead-run',
		});
		expect(
			await takeForReplay(store, { taker: 'next run', limit: 5, workflowId: 'wf-dead-run' }),
		).toEqual([]);
		await adminQuery(
			`UPDATE "${schema}".dead_letters SET updated_at = now() - interval '31 minutes' WHERE id = $1`,
			[parked.id],
		);
		const [second] = await takeForReplay(store, {
			taker: 'next run',
			limit: 5,
			workflowId: 'wf-dead-run',
		});
		expect(second.id).toBe(first.id);
		expect(Number(second.generation)).toBeGreaterThan(Number(first.generation));
	});
});

describe('the audit trail', () => {
	it('refuses to lose an event, and leaves with its record only', async () => {
		const [parked] = await parkAll(store, [failed()]);
		await expect(
			adminQuery(`DELETE FROM "${schema}".dead_letter_events WHERE dead_letter_id = $1`, [
				parked.id,
			]),
		).rejects.toThrow(/append-only/);
		await adminQuery(`DELETE FROM "${schema}".dead_letters WHERE id = $1`, [parked.id]);
		expect(
			await adminQuery(`SELECT 1 FROM "${schema}".dead_letter_events WHERE dead_letter_id = $1`, [
				parked.id,
			]),
		).toEqual([]);
	});
});
