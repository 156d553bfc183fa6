import { claimEvents, ClaimMode } from '../../lib/dedupe';
import { purgeExpiredSql } from '../../lib/dedupe/sql';
import { purgeExpiredKeys } from '../../lib/idempotency/purge';
import { purgeKeysSql } from '../../lib/idempotency/sql';
import { purgeExpired } from '../../lib/control';
import { prometheusMetrics } from '../../lib/console/metrics';
import { adminClient, adminQuery, testStore } from '../helpers/store';

const { store, schema, cleanup } = testStore('housekeeping');
afterAll(cleanup);

const t = (name: string) => `"${schema}".${name}`;
const count = async (table: string, where = 'true'): Promise<number> =>
	(await adminQuery<{ n: number }>(`SELECT count(*)::int AS n FROM ${t(table)} WHERE ${where}`))[0]
		.n;

const withinSeconds = async <T>(seconds: number, work: Promise<T>): Promise<T> => {
	let timer: NodeJS.Timeout | undefined;
	try {
		return await Promise.race([
			work,
			new Promise<never>((_, reject) => {
				timer = setTimeout(() => reject(new Error(`blocked for ${seconds} s`)), seconds * 1000);
			}),
		]);
	} finally {
		clearTimeout(timer);
	}
};

/** 25 rows past retention in every table, beside rows that must stay: open, in progress, held, live. */
async function seed(prefix: string): Promise<void> {
	await adminQuery(`
		INSERT INTO ${t('idempotency_keys')} (scope, key, fingerprint, status, lease_until, expires_at)
		SELECT 'crm', '${prefix}gone-' || i, 'f', CASE WHEN i <= 20 THEN 'succeeded' ELSE 'failed' END, now() - interval '40 days', now() - interval '1 day'
		FROM generate_series(1, 25) i
		UNION ALL SELECT 'crm', '${prefix}open-' || i, 'f', CASE WHEN i = 1 THEN 'in_progress' ELSE 'unknown' END, now() - interval '40 days', now() - interval '1 day'
		FROM generate_series(1, 2) i
		UNION ALL SELECT 'crm', '${prefix}live-' || i, 'f', 'succeeded', now(), now() + interval '29 days'
		FROM generate_series(1, 3) i;

		INSERT INTO ${t('processed_events')} (consumer, event_id, status, lease_until, expires_at)
		SELECT 'orders', '${prefix}gone-' || i, CASE WHEN i <= 20 THEN 'done' ELSE 'failed' END, now() - interval '40 days', now() - interval '1 day'
		FROM generate_series(1, 25) i
		UNION ALL SELECT 'orders', '${prefix}open-' || i, 'in_progress', now() + interval '1 hour', now() - interval '1 day'
		FROM generate_series(1, 2) i
		UNION ALL SELECT 'orders', '${prefix}live-' || i, 'done', now(), now() + interval '29 days'
		FROM generate_series(1, 3) i;

		INSERT INTO ${t('entity_versions')} (consumer, entity_key, version, event_id, updated_at)
		SELECT 'orders', '${prefix}gone-' || i, 1, '${prefix}gone-' || i, now() - interval '40 days'
		FROM generate_series(1, 25) i
		UNION ALL SELECT 'orders', '${prefix}open-' || i, 1, '${prefix}open-' || i, now() - interval '40 days'
		FROM generate_series(1, 2) i
		UNION ALL SELECT 'orders', '${prefix}live-' || i, 1, '${prefix}live-' || i, now()
		FROM generate_series(1, 3) i;

		INSERT INTO ${t('dead_letters')} (workflow_id, step, item_key, error_class, payload, status, hold_reason, closed_at, expires_at)
		SELECT 'wf', 'write', '${prefix}gone-' || i, 'permanent', '{}'::json, (ARRAY['resolved', 'abandoned', 'replayed'])[1 + i % 3], NULL, now() - interval '40 days', now() - interval '1 day'
		FROM generate_series(1, 25) i
		UNION ALL SELECT 'wf', 'write', '${prefix}open-' || i, 'permanent', '{}'::json, CASE WHEN i = 1 THEN 'new' ELSE 'held' END, CASE WHEN i = 1 THEN NULL ELSE 'pause' END, NULL, now() - interval '1 day'
		FROM generate_series(1, 2) i
		UNION ALL SELECT 'wf', 'write', '${prefix}live-' || i, 'permanent', '{}'::json, 'resolved', NULL, now(), now() + interval '29 days'
		FROM generate_series(1, 3) i;
		INSERT INTO ${t('dead_letter_events')} (dead_letter_id, actor, to_status)
		SELECT id, 'maria', status FROM ${t('dead_letters')} WHERE item_key LIKE '${prefix}%';

		INSERT INTO ${t('dead_letter_daily')} (day, workflow_id, step, owner, reason, parked)
		SELECT current_date - 500 - i, 'wf', 'write', '', '${prefix}', 1 FROM generate_series(1, 25) i;

		INSERT INTO ${t('pause_events')} (scope, name, paused, actor, at)
		SELECT 'integration', '${prefix}crm', i % 2 = 0, 'maria', now() - interval '400 days' FROM generate_series(1, 25) i
		UNION ALL SELECT 'integration', '${prefix}crm', true, 'maria', now() FROM generate_series(1, 3) i;

		INSERT INTO ${t('drill_events')} (integration, action, actor, at)
		SELECT '${prefix}crm', 'start', 'maria', now() - interval '400 days' FROM generate_series(1, 25) i
		UNION ALL SELECT '${prefix}crm', 'start', 'maria', now() FROM generate_series(1, 3) i;

		INSERT INTO ${t('execution_reports')} (execution_id, ending, first_reported_at)
		SELECT '${prefix}gone-' || i, 'failed', now() - interval '40 days' FROM generate_series(1, 25) i
		UNION ALL SELECT '${prefix}live-' || i, 'crashed', now() FROM generate_series(1, 3) i;

		INSERT INTO ${t('outbox_messages')} (destination, method, url, idempotency_key, fingerprint, status, created_at, completed_at)
		SELECT 'crm', 'POST', 'https://crm.example/x', '${prefix}gone-' || i, 'f', CASE WHEN i <= 20 THEN 'done' ELSE 'dead' END, now() - interval '41 days', now() - interval '40 days'
		FROM generate_series(1, 25) i
		UNION ALL SELECT 'crm', 'POST', 'https://crm.example/x', '${prefix}open-' || i, 'f', CASE WHEN i = 1 THEN 'pending' ELSE 'in_flight' END, now() - interval '41 days', NULL
		FROM generate_series(1, 2) i
		UNION ALL SELECT 'crm', 'POST', 'https://crm.example/x', '${prefix}live-' || i, 'f', 'done', now(), now()
		FROM generate_series(1, 3) i;
	`);
}

const prefixed = (prefix: string, kind: 'gone-' | 'open-' | 'live-', column = 'key') =>
	`${column} LIKE '${prefix}${kind}%'`;

/**
 * Thirty expired key records an hour apart (`${prefix}01` the oldest), stored newest first, so
 * a pick that took them in the order they are stored would take the newest.
 */
async function seedHourly(prefix: string): Promise<void> {
	await adminQuery(`
		INSERT INTO ${t('idempotency_keys')} (scope, key, fingerprint, status, lease_until, expires_at)
		SELECT 'crm', '${prefix}' || lpad(i::text, 2, '0'), 'f', 'succeeded', now() - interval '40 days',
			now() - interval '1 day' - (31 - i) * interval '1 hour'
		FROM generate_series(30, 1, -1) i`);
}

describe('housekeeping', () => {
	beforeAll(async () => {
		await store.ready();
	});

	it('purges every table past its retention in slices and leaves open, held and live rows', async () => {
		await seed('a-');
		const result = await purgeExpired(store, { sliceSize: 10 });

		expect(result).toEqual({
			idempotencyKeys: 25,
			processedEvents: 25,
			entityVersions: 25,
			deadLetters: 25,
			deadLetterDaily: 25,
			pauseEvents: 25,
			drillEvents: 25,
			outboxMessages: 25,
			executionReports: 25,
		});
		expect(await count('execution_reports', prefixed('a-', 'live-', 'execution_id'))).toBe(3);
		expect(await count('idempotency_keys', prefixed('a-', 'gone-'))).toBe(0);
		expect(await count('idempotency_keys', prefixed('a-', 'open-'))).toBe(2);
		expect(await count('idempotency_keys', prefixed('a-', 'live-'))).toBe(3);
		expect(await count('processed_events', prefixed('a-', 'gone-', 'event_id'))).toBe(0);
		expect(await count('processed_events', prefixed('a-', 'open-', 'event_id'))).toBe(2);
		expect(await count('processed_events', prefixed('a-', 'live-', 'event_id'))).toBe(3);
		// The versions of in-progress claims stay: releasing them restores the previous version.
		expect(await count('entity_versions', prefixed('a-', 'gone-', 'entity_key'))).toBe(0);
		expect(await count('entity_versions', prefixed('a-', 'open-', 'entity_key'))).toBe(2);
		expect(await count('entity_versions', prefixed('a-', 'live-', 'entity_key'))).toBe(3);
		expect(await count('dead_letters', prefixed('a-', 'gone-', 'item_key'))).toBe(0);
		expect(
			await adminQuery<{ status: string }>(
				`SELECT status FROM ${t('dead_letters')} WHERE ${prefixed('a-', 'open-', 'item_key')} ORDER BY status`,
			),
		).toEqual([{ status: 'held' }, { status: 'new' }]);
		expect(await count('dead_letters', prefixed('a-', 'live-', 'item_key'))).toBe(3);
		// Audit events leave with their dead letter, and only then.
		expect(await count('dead_letter_events')).toBe(5);
		expect(await count('dead_letter_daily', `reason = 'a-'`)).toBe(0);
		// The rollup rows the park triggers wrote for today stay.
		expect(await count('dead_letter_daily', `day >= current_date - 1`)).toBeGreaterThan(0);
		expect(await count('pause_events', `name = 'a-crm'`)).toBe(3);
		expect(await count('drill_events', `integration = 'a-crm'`)).toBe(3);
		expect(await count('outbox_messages', prefixed('a-', 'gone-', 'idempotency_key'))).toBe(0);
		expect(
			await adminQuery<{ status: string }>(
				`SELECT status FROM ${t('outbox_messages')} WHERE ${prefixed('a-', 'open-', 'idempotency_key')} ORDER BY status`,
			),
		).toEqual([{ status: 'in_flight' }, { status: 'pending' }]);
		expect(await count('outbox_messages', prefixed('a-', 'live-', 'idempotency_key'))).toBe(3);

		// Nothing left to do: a second run deletes nothing.
		expect(Object.values(await purgeExpired(store, { sliceSize: 10 }))).toEqual(Array(9).fill(0));
	});

	it('a row a claim holds is skipped, not waited on, and goes with the next purge', async () => {
		await seed('b-');
		const holder = await adminClient();
		try {
			await holder.query('BEGIN');
			await holder.query(
				`SELECT 1 FROM ${t('processed_events')} WHERE event_id = 'b-gone-1' FOR UPDATE`,
			);
			const result = await withinSeconds(10, purgeExpired(store, { sliceSize: 10 }));
			expect(result.processedEvents).toBe(24);
			expect(await count('processed_events', `event_id = 'b-gone-1'`)).toBe(1);
			await holder.query('COMMIT');
		} finally {
			await holder.end();
		}
		expect((await purgeExpired(store, { sliceSize: 10 })).processedEvents).toBe(1);
	});

	it('a claim taken while a purge slice is open is not blocked', async () => {
		await seed('c-');
		const purger = await adminClient();
		try {
			// One slice, its transaction left open: it holds the rows it deleted.
			await purger.query('BEGIN');
			const slice = await purger.query(purgeExpiredSql(store, { consumer: null, limit: 10 }));
			expect(slice.rows).toMatchObject([{ picked: 10, deleted: 10 }]);

			const context = {
				consumer: 'orders',
				workflowId: 'wf',
				executionId: 'exec-during-purge',
				mode: ClaimMode.doneAtClaim,
				leaseSeconds: 600,
				retentionDays: 30,
			};
			const claims = await withinSeconds(
				10,
				claimEvents(store, context, [
					{ index: 0, eventId: 'c-fresh' },
					{ index: 1, eventId: 'c-live-1' },
				]),
			);
			expect(claims.map((claim) => claim.outcome)).toEqual(['new', 'duplicate']);
			await purger.query('COMMIT');
		} finally {
			await purger.end();
		}
		expect(await count('processed_events', `event_id = 'c-fresh' AND status = 'done'`)).toBe(1);
	});

	it('a stopped run purges nothing more, and the next run purges what it left', async () => {
		await seed('d-');
		const stopped = purgeExpired(store, { sliceSize: 10 }, AbortSignal.abort());
		expect(Object.values(await stopped)).toEqual(Array(9).fill(0));
		expect(await count('idempotency_keys', prefixed('d-', 'gone-'))).toBe(25);
		expect(await count('processed_events', prefixed('d-', 'gone-', 'event_id'))).toBe(25);
		expect(await count('outbox_messages', prefixed('d-', 'gone-', 'idempotency_key'))).toBe(25);
		expect(store.held).toBe(false);

		await purgeExpired(store, { sliceSize: 10, restPercent: 0 });
		expect(await count('idempotency_keys', prefixed('d-', 'gone-'))).toBe(0);
		expect(await count('processed_events', prefixed('d-', 'gone-', 'event_id'))).toBe(0);
		expect(await count('outbox_messages', prefixed('d-', 'gone-', 'idempotency_key'))).toBe(0);
		expect(store.held).toBe(false);
	});

	it('each slice picks the oldest rows from where the previous slice ended', async () => {
		await seedHourly('e-k-');
		const keys = async () =>
			(
				await adminQuery<{ key: string }>(
					`SELECT key FROM ${t('idempotency_keys')} WHERE key LIKE 'e-k-%' ORDER BY key`,
				)
			).map((row) => row.key);
		const range = (from: number, to: number) =>
			Array.from({ length: to - from + 1 }, (_, i) => `e-k-${String(from + i).padStart(2, '0')}`);

		const [first] = await store.query<{ picked: number; deleted: number; next: string }>(
			purgeKeysSql(store, { limit: 10, after: null }),
		);
		expect(first).toMatchObject({ picked: 10, deleted: 10 });
		expect(await keys()).toEqual(range(11, 30));

		// A record older than the slice's start, expired since: the next slice goes on from where
		// the last ended and leaves it to the next purge, which starts from the front again.
		await adminQuery(`
			INSERT INTO ${t('idempotency_keys')} (scope, key, fingerprint, status, lease_until, expires_at)
			VALUES ('crm', 'e-k-00', 'f', 'succeeded', now() - interval '40 days', now() - interval '3 days')`);
		const [second] = await store.query<{ picked: number; deleted: number; next: string }>(
			purgeKeysSql(store, { limit: 10, after: first.next }),
		);
		expect(second).toMatchObject({ picked: 10, deleted: 10 });
		expect(await keys()).toEqual(['e-k-00', ...range(21, 30)]);

		await purgeExpiredKeys(store, { size: 4, rest: 0 });
		expect(await keys()).toEqual([]);
	});

	it("a slice's end reads back the same whatever the session's DateStyle and time zone", async () => {
		await seedHourly('f-k-');
		const session = await adminClient();
		try {
			// Both print a timestamp with a zone abbreviation under this DateStyle.
			for (const zone of ['Asia/Jakarta', 'Asia/Shanghai']) {
				await session.query(`SET DateStyle = 'SQL, DMY'; SET TimeZone = '${zone}'`);
				const slice = async (after: string | null) =>
					(
						await session.query<{ picked: number; next: string }>(
							purgeKeysSql(store, { limit: 5, after }),
						)
					).rows[0];
				const first = await slice(null);
				const second = await slice(first.next);
				expect([first.picked, second.picked]).toEqual([5, 5]);
			}
		} finally {
			await session.end();
		}
		// Twenty went, the oldest first: no row was skipped by a cursor read back hours late.
		const left = await adminQuery<{ key: string }>(
			`SELECT key FROM ${t('idempotency_keys')} WHERE key LIKE 'f-k-%' ORDER BY key`,
		);
		expect(left.map((row) => row.key)).toEqual(
			Array.from({ length: 10 }, (_, i) => `f-k-${21 + i}`),
		);
	});

	it('the parked counter never goes down when Housekeeping purges the days it summed', async () => {
		const parked = async (workflowId: string): Promise<number> => {
			const line = (await prometheusMetrics(store))
				.split('\n')
				.find((l) =>
					l.startsWith(
						`reliability_dead_letters_parked_total{workflow_id="${workflowId}",step="write"}`,
					),
				);
			return Number(line?.split(' ').pop() ?? 0);
		};
		await adminQuery(`
			INSERT INTO ${t('dead_letter_daily')} (day, workflow_id, step, owner, reason, parked)
			SELECT current_date - 500 - i, 'wf-counted', 'write', '', 'counted', 2 FROM generate_series(1, 7) i
			UNION ALL SELECT current_date - 3, 'wf-counted', 'write', '', 'counted', 5`);
		expect(await parked('wf-counted')).toBe(19);
		await purgeExpired(store, { sliceSize: 3 });
		expect(await count('dead_letter_daily', `workflow_id = 'wf-counted'`)).toBe(1);
		expect(await parked('wf-counted')).toBe(19);
		// Purged again later (nothing of it left to purge): still the same.
		await purgeExpired(store, { sliceSize: 3 });
		expect(await parked('wf-counted')).toBe(19);
	});
});
