import {
	claimEvents,
	type ClaimContext,
	ClaimMode,
	completeEvents,
	purgeExpiredEvents,
	releaseEvents,
	releaseExecutionClaims,
} from '../../lib/dedupe';
import { Store } from '../../lib/store';
import { adminClient, adminQuery, storeConfig, testStore } from '../helpers/store';
import { sleep } from '../helpers/sleep';

const { store, schema, cleanup } = testStore('dedupe');
afterAll(cleanup);

let execution = 0;
const context = (overrides: Partial<ClaimContext> = {}): ClaimContext => ({
	consumer: 'orders',
	workflowId: 'wf1',
	executionId: `exec-${++execution}`,
	mode: ClaimMode.doneAtClaim,
	leaseSeconds: 600,
	retentionDays: 30,
	...overrides,
});
const ids = (...eventIds: string[]) => eventIds.map((eventId, index) => ({ index, eventId }));
const outcomes = (results: Array<{ outcome: string }>) => results.map((r) => r.outcome);
const rows = (where = 'true') =>
	adminQuery<{ event_id: string; status: string; execution_id: string }>(
		`SELECT event_id, status, execution_id FROM "${schema}".processed_events WHERE ${where} ORDER BY event_id`,
	);

describe('claims', () => {
	it('the same event delivered twice is new once, then a duplicate that says it was done', async () => {
		const first = await claimEvents(store, context(), ids('evt-1'));
		const second = await claimEvents(store, context(), ids('evt-1'));
		expect(outcomes(first)).toEqual(['new']);
		expect(second).toEqual([
			{
				index: 0,
				eventId: 'evt-1',
				outcome: 'duplicate',
				reason: 'done',
				claimedBy: expect.stringMatching(/^exec-/),
			},
		]);
		expect(await rows(`event_id = 'evt-1'`)).toHaveLength(1);
	});

	it('ten executions claiming one event at once: exactly one gets it', async () => {
		// Ten pools, as ten queue-mode workers would have.
		const workers = Array.from({ length: 10 }, () => new Store(storeConfig(schema)));
		try {
			const results = await Promise.all(
				workers.map((worker) => claimEvents(worker, context(), ids('evt-race'))),
			);
			expect(results.flat().filter((r) => r.outcome === 'new')).toHaveLength(1);
			expect(results.flat().filter((r) => r.outcome === 'duplicate')).toHaveLength(9);
		} finally {
			await Promise.all(workers.map((worker) => worker.close()));
		}
		expect(await rows(`event_id = 'evt-race'`)).toHaveLength(1);
	});

	it('duplicates inside one input batch are caught, the first copy is new', async () => {
		const results = await claimEvents(store, context(), ids('evt-b1', 'evt-b2', 'evt-b1'));
		expect(results.map((r) => [r.outcome, 'reason' in r ? r.reason : undefined])).toEqual([
			['new', undefined],
			['new', undefined],
			['duplicate', 'in_batch'],
		]);
	});

	it("a failed execution's claims, once released, let the redelivery through as new", async () => {
		const failed = context();
		expect(outcomes(await claimEvents(store, failed, ids('evt-fail', 'evt-fail-2')))).toEqual([
			'new',
			'new',
		]);
		expect(await releaseExecutionClaims(store, failed.executionId)).toBe(2);
		expect(outcomes(await claimEvents(store, context(), ids('evt-fail')))).toEqual(['new']);
	});

	it('release by event ID frees just that event', async () => {
		const owner = context();
		await claimEvents(store, owner, ids('evt-r1', 'evt-r2'));
		expect(await releaseEvents(store, 'orders', ['evt-r1'], owner.executionId)).toEqual(['evt-r1']);
		expect(outcomes(await claimEvents(store, context(), ids('evt-r1', 'evt-r2')))).toEqual([
			'new',
			'duplicate',
		]);
	});

	it('consumers are independent', async () => {
		await claimEvents(store, context({ consumer: 'billing' }), ids('evt-shared'));
		expect(
			outcomes(await claimEvents(store, context({ consumer: 'crm' }), ids('evt-shared'))),
		).toEqual(['new']);
	});

	it('10,000 IDs in one run are claimed in one statement and all found again', async () => {
		const many = Array.from({ length: 10_000 }, (_, i) => ({ index: i, eventId: `bulk-${i}` }));
		const first = await claimEvents(store, context({ consumer: 'bulk' }), many);
		expect(first.every((r) => r.outcome === 'new')).toBe(true);
		const again = await claimEvents(store, context({ consumer: 'bulk' }), many);
		expect(again.every((r) => r.outcome === 'duplicate')).toBe(true);
		const count = await adminQuery<{ n: number }>(
			`SELECT count(*)::int AS n FROM "${schema}".processed_events WHERE consumer = 'bulk'`,
		);
		expect(count[0].n).toBe(10_000);
	});
});

describe('lease until complete', () => {
	it('a live lease is in progress elsewhere; completion makes it done', async () => {
		const owner = context({ mode: ClaimMode.leaseUntilComplete });
		await claimEvents(store, owner, ids('evt-lease'));
		const meanwhile = await claimEvents(
			store,
			context({ mode: ClaimMode.leaseUntilComplete }),
			ids('evt-lease'),
		);
		expect(meanwhile[0]).toMatchObject({
			outcome: 'duplicate',
			reason: 'in_progress',
			claimedBy: owner.executionId,
		});
		expect(await completeEvents(store, 'orders', ['evt-lease'], owner.executionId)).toEqual([
			{ eventId: 'evt-lease', changed: true, owner: owner.executionId, status: 'done' },
		]);
		const later = await claimEvents(store, context(), ids('evt-lease'));
		expect(later[0]).toMatchObject({ outcome: 'duplicate', reason: 'done' });
	});

	it('an expired lease (a worker that died) is claimable again by another execution', async () => {
		const crashed = context({ mode: ClaimMode.leaseUntilComplete, leaseSeconds: 1 });
		await claimEvents(store, crashed, ids('evt-crash'));
		await sleep(1_300);
		const retry = context({ mode: ClaimMode.leaseUntilComplete });
		expect(outcomes(await claimEvents(store, retry, ids('evt-crash')))).toEqual(['new']);
		expect(await rows(`event_id = 'evt-crash'`)).toEqual([
			{ event_id: 'evt-crash', status: 'in_progress', execution_id: retry.executionId },
		]);
	});
});

describe('ordering', () => {
	const versioned = (entityKey: string, ...events: Array<[string, number]>) =>
		events.map(([eventId, version], index) => ({
			index,
			eventId,
			entityKey,
			version: String(version),
		}));

	it('versions arriving 3, 1, 2 in separate runs send 1 and 2 to stale', async () => {
		const three = await claimEvents(store, context(), versioned('cust-1', ['v3', 3]));
		const one = await claimEvents(store, context(), versioned('cust-1', ['v1', 1]));
		const two = await claimEvents(store, context(), versioned('cust-1', ['v2', 2]));
		expect([three[0].outcome, one[0], two[0]]).toEqual([
			'new',
			{ index: 0, eventId: 'v1', outcome: 'stale', lastVersion: '3' },
			{ index: 0, eventId: 'v2', outcome: 'stale', lastVersion: '3' },
		]);
		// A stale event is not recorded as processed.
		expect(await rows(`event_id IN ('v1', 'v2')`)).toEqual([]);
	});

	it('versions 3, 1, 2 in one batch: 3 is new, 1 and 2 stale', async () => {
		const results = await claimEvents(
			store,
			context(),
			versioned('cust-2', ['b3', 3], ['b1', 1], ['b2', 2]),
		);
		expect(results.map((r) => r.outcome)).toEqual(['new', 'stale', 'stale']);
	});

	it('an equal version under another event ID is a duplicate; a newer one is new', async () => {
		await claimEvents(store, context(), versioned('cust-3', ['e5', 5]));
		const same = await claimEvents(store, context(), versioned('cust-3', ['e5-again', 5]));
		expect(same[0]).toMatchObject({ outcome: 'duplicate', reason: 'same_version' });
		expect(outcomes(await claimEvents(store, context(), versioned('cust-3', ['e6', 6])))).toEqual([
			'new',
		]);
	});

	it('releasing a failed execution restores the entity version it had advanced', async () => {
		await claimEvents(store, context(), versioned('cust-4', ['f1', 1]));
		const failed = context();
		await claimEvents(store, failed, versioned('cust-4', ['f2', 2]));
		await releaseExecutionClaims(store, failed.executionId);
		const version = await adminQuery<{ version: string }>(
			`SELECT version FROM "${schema}".entity_versions WHERE entity_key = 'cust-4'`,
		);
		expect(Number(version[0].version)).toBe(1);
		expect(outcomes(await claimEvents(store, context(), versioned('cust-4', ['f2', 2])))).toEqual([
			'new',
		]);
	});
});

describe('retention', () => {
	it('purge removes only expired IDs and says how many; an expired ID is new again', async () => {
		await claimEvents(store, context({ consumer: 'purge' }), ids('old-1', 'old-2', 'fresh'));
		await adminQuery(
			`UPDATE "${schema}".processed_events SET expires_at = now() - interval '1 day' WHERE consumer = 'purge' AND event_id LIKE 'old-%'`,
		);
		expect(await purgeExpiredEvents(store, 'purge')).toBe(2);
		expect((await rows(`consumer = 'purge'`)).map((r) => r.event_id)).toEqual(['fresh']);
		expect(
			outcomes(await claimEvents(store, context({ consumer: 'purge' }), ids('old-1'))),
		).toEqual(['new']);
	});

	it('an expired ID not yet purged is claimable again', async () => {
		await claimEvents(store, context({ consumer: 'expiry' }), ids('stale-id'));
		await adminQuery(
			`UPDATE "${schema}".processed_events SET expires_at = now() - interval '1 second' WHERE consumer = 'expiry'`,
		);
		expect(
			outcomes(await claimEvents(store, context({ consumer: 'expiry' }), ids('stale-id'))),
		).toEqual(['new']);
	});
});

describe('claims are fenced by their owner', () => {
	it('releasing a failed execution never undoes the events it had completed (lease mode)', async () => {
		const failed = context({ mode: ClaimMode.leaseUntilComplete });
		await claimEvents(store, failed, ids('part-1', 'part-2'));
		// The execution completed part-1, then failed before part-2 was done.
		await completeEvents(store, 'orders', ['part-1'], failed.executionId);
		expect(await releaseExecutionClaims(store, failed.executionId)).toBe(1);
		const again = await claimEvents(store, context(), ids('part-1', 'part-2'));
		expect(outcomes(again)).toEqual(['duplicate', 'new']);
		expect(again[0]).toMatchObject({ reason: 'done' });
	});

	it('release by event ID leaves a completed event done', async () => {
		const owner = context({ mode: ClaimMode.leaseUntilComplete });
		await claimEvents(store, owner, ids('kept-done'));
		await completeEvents(store, 'orders', ['kept-done'], owner.executionId);
		expect(await releaseEvents(store, 'orders', ['kept-done'], owner.executionId)).toEqual([]);
	});

	it("release by event ID never frees another execution's live claim", async () => {
		const owner = context({ mode: ClaimMode.untilExecutionEnds });
		await claimEvents(store, owner, [{ index: 0, eventId: 'held-elsewhere', payload: { n: 1 } }]);
		expect(await releaseEvents(store, 'orders', ['held-elsewhere'], 'another-execution')).toEqual(
			[],
		);
		expect(await rows(`event_id = 'held-elsewhere'`)).toHaveLength(1);
		const [again] = await claimEvents(store, context(), ids('held-elsewhere'));
		expect(again).toMatchObject({ outcome: 'duplicate', reason: 'in_progress' });
	});

	it('after a takeover the old owner completes nothing and learns who holds the claim', async () => {
		const old = context({ mode: ClaimMode.leaseUntilComplete, leaseSeconds: 1 });
		await claimEvents(store, old, ids('taken-over'));
		await adminQuery(
			`UPDATE "${schema}".processed_events SET lease_until = now() - interval '1 second' WHERE event_id = 'taken-over'`,
		);
		const fresh = context({ mode: ClaimMode.leaseUntilComplete });
		expect(outcomes(await claimEvents(store, fresh, ids('taken-over')))).toEqual(['new']);
		expect(await completeEvents(store, 'orders', ['taken-over'], old.executionId)).toEqual([
			{ eventId: 'taken-over', changed: false, owner: fresh.executionId, status: 'in_progress' },
		]);
		const [row] = await adminQuery<{ status: string; generation: string; execution_id: string }>(
			`SELECT status, generation, execution_id FROM "${schema}".processed_events WHERE event_id = 'taken-over'`,
		);
		expect(row).toEqual({
			status: 'in_progress',
			generation: '2',
			execution_id: fresh.executionId,
		});
		// The new owner's own release is still its to make.
		expect(await releaseExecutionClaims(store, old.executionId)).toBe(0);
	});

	it('the same execution run again (a stalled queue job) gets its own events as new, not duplicates', async () => {
		const once = context();
		await claimEvents(store, once, ids('rerun-1', 'rerun-2'));
		expect(outcomes(await claimEvents(store, once, ids('rerun-1', 'rerun-2')))).toEqual([
			'new',
			'new',
		]);
		expect(outcomes(await claimEvents(store, context(), ids('rerun-1')))).toEqual(['duplicate']);
	});

	it('a claim past retention but still in progress is not taken over by expiry', async () => {
		const owner = context({ mode: ClaimMode.leaseUntilComplete });
		await claimEvents(store, owner, ids('old-but-live'));
		await adminQuery(
			`UPDATE "${schema}".processed_events SET expires_at = now() - interval '1 day' WHERE event_id = 'old-but-live'`,
		);
		expect(await claimEvents(store, context(), ids('old-but-live'))).toEqual([
			expect.objectContaining({ outcome: 'duplicate', reason: 'in_progress' }),
		]);
		expect(await purgeExpiredEvents(store, 'orders')).toBeGreaterThanOrEqual(0);
		expect(await rows(`event_id = 'old-but-live'`)).toHaveLength(1);
	});

	it('release by execution uses an index, not a scan of the table', async () => {
		const client = await adminClient();
		try {
			// With scans priced out, the planner shows whether an index can serve the release at all.
			await client.query('SET enable_seqscan = off');
			const { rows: plan } = await client.query(
				`EXPLAIN (FORMAT JSON) DELETE FROM "${schema}".processed_events WHERE execution_id = 'x' AND (status = 'in_progress' OR completed_by = 'claim')`,
			);
			expect(JSON.stringify(plan)).toMatch(/processed_events_by_execution/);
		} finally {
			await client.end();
		}
	});
});

describe('versions compare exactly', () => {
	const versioned = (entityKey: string, eventId: string, version: string) => [
		{ index: 0, eventId, entityKey, version },
	];

	it('integers past 2^53 and timestamps within one millisecond are ordered, not equal', async () => {
		await claimEvents(store, context(), versioned('big', 'big-1', '9007199254740992'));
		expect(
			outcomes(await claimEvents(store, context(), versioned('big', 'big-2', '9007199254740993'))),
		).toEqual(['new']);
		const t1 = '1764496800000.001';
		const t2 = '1764496800000.002';
		await claimEvents(store, context(), versioned('micro', 'micro-1', t1));
		expect(
			outcomes(await claimEvents(store, context(), versioned('micro', 'micro-2', t2))),
		).toEqual(['new']);
		expect(await claimEvents(store, context(), versioned('micro', 'micro-0', t1))).toEqual([
			{ index: 0, eventId: 'micro-0', outcome: 'stale', lastVersion: t2 },
		]);
	});
});
