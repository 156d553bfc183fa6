import {
	deadLetterStats,
	getDeadLetters,
	getDeadLettersByKey,
	listDeadLetters,
	type ParkRequest,
	purgeDeadLetters,
	StatusChangeRefusedError,
	updateDeadLetterStatus,
} from '../../lib/deadletter';
import { MASKED as MASK } from '../../lib/masking';
import { adminQuery, testStore } from '../helpers/store';
import { parkAll } from '../helpers/park';

const { store, schema, cleanup } = testStore('deadletter');
afterAll(cleanup);

const failed = (overrides: Partial<ParkRequest> = {}): ParkRequest => ({
	workflowId: 'wf-leads',
	workflowName: 'Lead routing',
	executionId: '101',
	step: 'CRM Upsert',
	itemIndex: 0,
	errorClass: 'permanent',
	errorMessage: 'phone: invalid format',
	errorStatus: 422,
	payload: { lead: { email: 'ana@example.com', phone: '0151 2345' } },
	...overrides,
});

describe('park and get', () => {
	it('a parked item comes back byte for byte, with secrets masked', async () => {
		const payload = {
			z: 1,
			a: { b: 1.5, list: [3, 2, 1] },
			headers: { Authorization: 'Bearer sk_live_123', Cookie: 'sid=1', accept: 'json' },
			apiToken: 'tok',
			note: 'ünïcödé <script>',
		};
		const [parked] = await parkAll(store, [failed({ payload, idempotencyKey: 'lead-42:create' })], {
			maskFields: ['apiToken'],
		});
		expect(parked.created).toBe(true);
		const [record] = await getDeadLetters(store, [parked.id]);
		expect(JSON.stringify(record.payload)).toBe(
			JSON.stringify({
				...payload,
				headers: { Authorization: MASK, Cookie: MASK, accept: 'json' },
				apiToken: MASK,
			}),
		);
		expect(record).toMatchObject({
			status: 'new',
			step: 'CRM Upsert',
			error_class: 'permanent',
			error_message: 'phone: invalid format',
			error_status: 422,
			idempotency_key: 'lead-42:create',
			failure_count: 1,
		});
		expect(record.history).toEqual([
			{
				at: expect.any(Date),
				actor: 'n8n',
				fromStatus: null,
				toStatus: 'new',
				reason: 'phone: invalid format',
			},
		]);
		const stored = await adminQuery<{ text: string }>(
			`SELECT payload::text AS text FROM "${schema}".dead_letters WHERE id = $1`,
			[parked.id],
		);
		expect(stored[0].text).not.toContain('sk_live_123');
		expect((await getDeadLettersByKey(store, ['lead-42:create'])).map((r) => r.id)).toEqual([
			parked.id,
		]);
	});

	it('no secret lands in any column: payload headers in every form, error text, what happened, audit reasons', async () => {
		const canary = 'cAnArY-7f3a9e';
		const [parked] = await parkAll(store, [
			failed({
				idempotencyKey: 'lead-secrets:create',
				payload: {
					request: {
						headers: [
							{ name: 'Authorization', value: `Bearer ${canary}` },
							{ name: 'X-Api-Key', value: canary },
						],
						rawHeaders: ['Set-Cookie', `sid=${canary}`],
					},
					body: JSON.stringify({ user: 'ana', password: canary }),
					credentials: { client_secret: canary, refreshToken: canary },
				},
				errorMessage: `401 - {"error":"invalid_client","client_secret":"${canary}"}: Authorization: Bearer ${canary}`,
				alreadyHappened: `token=${canary} was used to enrich`,
				impact: `retry with api_key=${canary}`,
			}),
		]);
		await updateDeadLetterStatus(store, {
			id: parked.id,
			to: 'being_fixed',
			actor: 'ops@example.com',
			reason: `vendor said: use password: ${canary}`,
		});
		const rows = await adminQuery<{ row: string }>(
			`SELECT d::text AS row FROM "${schema}".dead_letters d WHERE id = $1
			 UNION ALL SELECT e::text FROM "${schema}".dead_letter_events e WHERE dead_letter_id = $1`,
			[parked.id],
		);
		expect(rows).toHaveLength(3);
		for (const { row } of rows) expect(row).not.toContain(canary);
		const [record] = await getDeadLetters(store, [parked.id]);
		expect(record.error_message).toBe(
			'401 - {"error":"invalid_client","client_secret":"[masked]"}: Authorization: [masked]',
		);
		expect(record.history.at(-1)?.reason).toBe('vendor said: use password: [masked]');
		expect((record.payload as { request: { headers: unknown } }).request.headers).toEqual([
			{ name: 'Authorization', value: MASK },
			{ name: 'X-Api-Key', value: MASK },
		]);
	});

	it('parking an open item again updates its counts and last failure instead of adding a row', async () => {
		const [first] = await parkAll(store, [
			failed({ idempotencyKey: 'lead-7:create', attempts: 3 }),
		]);
		const [again] = await parkAll(store, [
			failed({
				idempotencyKey: 'lead-7:create',
				attempts: 5,
				executionId: '102',
				errorMessage: 'phone: still invalid',
			}),
		]);
		expect(again).toEqual({
			id: first.id,
			status: 'new',
			failureCount: 2,
			created: false,
			// What the record now holds, for the node's output.
			payload: { lead: { email: 'ana@example.com', phone: '0151 2345' } },
			message: 'phone: still invalid',
		});
		const [record] = await getDeadLetters(store, [first.id]);
		expect(record).toMatchObject({
			attempts: 5,
			failure_count: 2,
			execution_id: '102',
			error_message: 'phone: still invalid',
		});
		expect((record.last_failed_at as Date).getTime()).toBeGreaterThanOrEqual(
			(record.first_failed_at as Date).getTime(),
		);
		expect(
			await adminQuery(
				`SELECT id FROM "${schema}".dead_letters WHERE idempotency_key = 'lead-7:create'`,
			),
		).toHaveLength(1);
	});

	it('items without a key are the same item when their payload is the same, whatever the key order', async () => {
		const [a] = await parkAll(store, [failed({ step: 'Enrich', payload: { x: 1, y: 2 } })]);
		const [b] = await parkAll(store, [failed({ step: 'Enrich', payload: { y: 2, x: 1 } })]);
		expect(b.id).toBe(a.id);
		expect(b.failureCount).toBe(2);
	});

	it('a payload JSON has no value for (NaN, Infinity) is stored as {}, not refused (found by the fuzz campaign)', async () => {
		const parked = await parkAll(store, [
			failed({ idempotencyKey: 'lead-nan', payload: Number.NaN }),
			failed({ idempotencyKey: 'lead-inf', payload: Number.POSITIVE_INFINITY }),
		]);
		const records = await getDeadLetters(
			store,
			parked.map((p) => p.id),
		);
		expect(records.map((r) => r.payload)).toEqual([{}, {}]);
	});

	it('a retention given as text or left empty is read as validated, for that item alone (found by the fuzz campaign)', async () => {
		const parked = await parkAll(store, [
			failed({ idempotencyKey: 'lead-ret-empty', retentionDays: '' as unknown as number }),
			failed({ idempotencyKey: 'lead-ret-text', retentionDays: '3e1' as unknown as number }),
		]);
		const rows = await adminQuery<{ idempotency_key: string; days: number }>(
			`SELECT idempotency_key, round(extract(epoch FROM expires_at - parked_at) / 86400)::int AS days
			 FROM "${schema}".dead_letters WHERE id = ANY($1::bigint[]) ORDER BY idempotency_key`,
			[parked.map((p) => p.id)],
		);
		expect(rows).toEqual([
			{ idempotency_key: 'lead-ret-empty', days: 90 },
			{ idempotency_key: 'lead-ret-text', days: 30 },
		]);
	});

	it("an item's own letter is one per item at any step; a step's letter is one per step", async () => {
		// An event's letter (the item's own): a stop at Enrich, then a failure at CRM Upsert.
		const [atEnrich] = await parkAll(store, [
			failed({ step: 'Enrich', idempotencyKey: 'event:leads:L-77', errorClass: 'stopped' }),
		]);
		const [atCrm] = await parkAll(store, [
			failed({ step: 'CRM Upsert', idempotencyKey: 'event:leads:L-77', executionId: '102' }),
		]);
		expect(atCrm).toMatchObject({ id: atEnrich.id, created: false, failureCount: 2 });
		const [letter] = await getDeadLettersByKey(store, ['event:leads:L-77']);
		expect(letter).toMatchObject({
			step: 'CRM Upsert',
			execution_id: '102',
			error_class: 'permanent',
		});
		// A write's letter is its step's: the same key at two steps is two records.
		const [first] = await parkAll(store, [failed({ step: 'Enrich', idempotencyKey: 'L-77:w' })]);
		const [second] = await parkAll(store, [
			failed({ step: 'CRM Upsert', idempotencyKey: 'L-77:w' }),
		]);
		expect(second.id).not.toBe(first.id);
	});

	it('a closed item parked again opens a new record', async () => {
		const [first] = await parkAll(store, [failed({ idempotencyKey: 'lead-8:create' })]);
		await updateDeadLetterStatus(store, {
			id: first.id,
			to: 'resolved',
			actor: 'ops@example.com',
			reason: 'fixed by hand in the CRM',
		});
		const [second] = await parkAll(store, [failed({ idempotencyKey: 'lead-8:create' })]);
		expect(second.created).toBe(true);
		expect(second.id).not.toBe(first.id);
	});

	it('executions parking the same letter at one moment update one record, none refused (found by check:protocol)', async () => {
		// Two unique indexes on open letters (the per-step one migration 23 kept) let the second of
		// two parks that passed ON CONFLICT's check together fail as a duplicate key.
		const rounds = 40;
		const at = 10;
		for (let round = 0; round < rounds; round++) {
			const key = `race-${round}:create`;
			const outcomes = await Promise.allSettled(
				Array.from({ length: at }, () => parkAll(store, [failed({ idempotencyKey: key })])),
			);
			expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
			const letters = await getDeadLettersByKey(store, [key]);
			expect(letters).toHaveLength(1);
			expect(letters[0].failure_count).toBe(at);
		}
	});

	it('parks 1,000 items in one statement, the same item twice in a batch being one record', async () => {
		const batch = Array.from({ length: 1000 }, (_, i) =>
			failed({ step: 'Bulk', idempotencyKey: `bulk-${i % 999}` }),
		);
		const results = await parkAll(store, batch);
		expect(new Set(results.map((r) => r.id)).size).toBe(999);
		expect(results[999].id).toBe(results[0].id);
	});
});

describe('status changes and the audit trail', () => {
	it('records who, when, from, to and why; Get returns the history with the record', async () => {
		const [parked] = await parkAll(store, [failed({ idempotencyKey: 'lead-9:create' })]);
		await updateDeadLetterStatus(store, {
			id: parked.id,
			to: 'being_fixed',
			actor: 'maria@sales-ops',
		});
		await updateDeadLetterStatus(store, {
			id: parked.id,
			to: 'abandoned',
			actor: 'maria@sales-ops',
			reason: 'duplicate lead, merged by hand',
		});
		const [record] = await getDeadLetters(store, [parked.id]);
		expect(record.status).toBe('abandoned');
		expect(record.closed_at).toBeInstanceOf(Date);
		expect(record.history.map((e) => [e.actor, e.fromStatus, e.toStatus, e.reason])).toEqual([
			['n8n', null, 'new', 'phone: invalid format'],
			['maria@sales-ops', 'new', 'being_fixed', null],
			['maria@sales-ops', 'being_fixed', 'abandoned', 'duplicate lead, merged by hand'],
		]);
	});

	it('refuses a change without an actor, and resolve or abandon without a reason, changing nothing', async () => {
		const [parked] = await parkAll(store, [failed({ idempotencyKey: 'lead-10:create' })]);
		await expect(
			updateDeadLetterStatus(store, { id: parked.id, to: 'being_fixed', actor: ' ' }),
		).rejects.toThrow(
			new StatusChangeRefusedError(
				`Changing dead letter ${parked.id} to being_fixed needs an actor`,
			),
		);
		await expect(
			updateDeadLetterStatus(store, { id: parked.id, to: 'resolved', actor: 'maria' }),
		).rejects.toThrow(/needs a reason/);
		await expect(
			updateDeadLetterStatus(store, { id: '999999999', to: 'being_fixed', actor: 'maria' }),
		).rejects.toThrow(/does not exist/);
		const [record] = await getDeadLetters(store, [parked.id]);
		expect(record.status).toBe('new');
		expect(record.history).toHaveLength(1);
	});

	it('the audit trail cannot be rewritten', async () => {
		await expect(
			adminQuery(`UPDATE "${schema}".dead_letter_events SET actor = 'someone else'`),
		).rejects.toThrow(/append-only/);
	});
});

describe('list, stats and purge', () => {
	const other = testStore('deadletter_stats');
	afterAll(other.cleanup);

	it('Stats over a seeded set returns the exact expected numbers', async () => {
		const s = other.store;
		// A held record is held by something that will release it: here, its integration's pause.
		await s.ready();
		await adminQuery(
			`INSERT INTO "${other.schema}".pauses (scope, name, paused, changed_by, reason) VALUES ('integration', 'ledger-paused', true, 'ops', 'outage')`,
		);
		const parked = await parkAll(s, [
			failed({
				workflowId: 'wf-a',
				step: 'CRM',
				idempotencyKey: 'a1',
				errorMessage: 'phone: invalid format',
				owner: 'sales-ops',
			}),
			failed({
				workflowId: 'wf-a',
				step: 'CRM',
				idempotencyKey: 'a2',
				errorMessage: 'phone: invalid format',
				owner: 'sales-ops',
			}),
			failed({
				workflowId: 'wf-a',
				step: 'Enrich',
				idempotencyKey: 'a3',
				errorMessage: 'timeout',
				owner: 'data',
			}),
			failed({
				workflowId: 'wf-b',
				workflowName: 'Billing',
				step: 'Ledger',
				idempotencyKey: 'b1',
				errorMessage: 'phone: invalid format',
			}),
			failed({
				workflowId: 'wf-b',
				workflowName: 'Billing',
				step: 'Ledger',
				idempotencyKey: 'b2',
				errorMessage: 'conflict',
				status: 'held',
				integration: 'ledger-paused',
			}),
		]);
		// Fixed ages, set with the database clock: parked 1, 2, 3, 4 and 5 hours ago; one resolved after 30 minutes.
		for (const [i, p] of parked.entries()) {
			await adminQuery(
				`UPDATE "${other.schema}".dead_letters SET parked_at = now() - make_interval(hours => $2) WHERE id = $1`,
				[p.id, i + 1],
			);
		}
		await updateDeadLetterStatus(s, {
			id: parked[0].id,
			to: 'resolved',
			actor: 'maria',
			reason: 'fixed',
		});
		await adminQuery(
			`UPDATE "${other.schema}".dead_letters SET closed_at = parked_at + interval '30 minutes' WHERE id = $1`,
			[parked[0].id],
		);

		const stats = await deadLetterStats(s);
		expect(stats.openCount).toBe(4);
		expect(stats.openByStatus).toEqual({ new: 3, held: 1 });
		// Waiting (held is out of the review queue): 2 h, 3 h, 4 h -> oldest 4 h, median 3 h.
		expect(Math.round(stats.oldestWaitSeconds!)).toBeGreaterThanOrEqual(4 * 3600);
		expect(Math.round(stats.oldestWaitSeconds!)).toBeLessThan(4 * 3600 + 60);
		expect(Math.round(stats.medianWaitSeconds! / 60)).toBe(180);
		expect(stats.averageResolutionSeconds).toBe(1800);
		expect(stats.topReasons).toEqual([
			{ reason: 'phone: invalid format', count: 3 },
			{ reason: 'conflict', count: 1 },
			{ reason: 'timeout', count: 1 },
		]);
		expect(stats.openByWorkflow).toEqual([
			{ workflowId: 'wf-a', workflowName: 'Lead routing', open: 2 },
			{ workflowId: 'wf-b', workflowName: 'Billing', open: 2 },
		]);
		expect(stats.openByStep).toEqual([
			{ step: 'Ledger', open: 2 },
			{ step: 'CRM', open: 1 },
			{ step: 'Enrich', open: 1 },
		]);
		expect(stats.openByOwner).toEqual([
			{ owner: '(no owner)', open: 2 },
			{ owner: 'data', open: 1 },
			{ owner: 'sales-ops', open: 1 },
		]);
		expect(stats.parkedPerDay.reduce((n, d) => n + d.parked, 0)).toBe(5);

		const list = await listDeadLetters(s, { statuses: ['new'], workflowId: 'wf-a' });
		expect(list.map((r) => r.idempotency_key)).toEqual(['a2', 'a3']);
		expect((await listDeadLetters(s, { search: 'TIMEOUT' })).map((r) => r.idempotency_key)).toEqual(
			['a3'],
		);
		expect(
			(await listDeadLetters(s, { olderThanMinutes: 4 * 60 - 5 })).map((r) => r.idempotency_key),
		).toEqual(['b1', 'b2']);
	});

	it('Purge removes only closed records past retention and says how many', async () => {
		const s = other.store;
		const parked = await parkAll(s, [
			failed({ idempotencyKey: 'p1' }),
			failed({ idempotencyKey: 'p2' }),
			failed({ idempotencyKey: 'p3' }),
		]);
		await updateDeadLetterStatus(s, {
			id: parked[0].id,
			to: 'resolved',
			actor: 'maria',
			reason: 'done',
		});
		await updateDeadLetterStatus(s, {
			id: parked[1].id,
			to: 'resolved',
			actor: 'maria',
			reason: 'done',
		});
		// p1 closed and expired, p2 closed but within retention, p3 open and expired.
		await adminQuery(
			`UPDATE "${other.schema}".dead_letters SET expires_at = now() - interval '1 day' WHERE id = ANY($1::bigint[])`,
			[[parked[0].id, parked[2].id]],
		);
		expect(await purgeDeadLetters(s)).toBe(1);
		expect(
			(
				await getDeadLetters(
					s,
					parked.map((p) => p.id),
				)
			)
				.map((r) => r.idempotency_key)
				.sort(),
		).toEqual(['p2', 'p3']);
		expect(
			await adminQuery(
				`SELECT 1 FROM "${other.schema}".dead_letter_events WHERE dead_letter_id = $1`,
				[parked[0].id],
			),
		).toHaveLength(0);
	});
});
