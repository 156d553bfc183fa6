import type { SqlQuery, Store } from '../../store';

/**
 * Folds a run's streak into the breaker row of `integration`: when `reset` (the run saw a success)
 * the streak becomes the `failures` after it, else `failures` adds to the stored streak; open for
 * the cool-down (`coolDownSeconds`) once the streak reaches `threshold`, close on a success.
 */
export const recordBreakerSql = (
	store: Store,
	input: {
		integration: string;
		reset: boolean;
		failures: number;
		threshold: number;
		coolDownSeconds: number;
	},
): SqlQuery => ({
	text: `
INSERT INTO ${store.table('breakers')} AS b (integration, consecutive_failures, open_until, updated_at)
VALUES ($1, $3::int, CASE WHEN $3::int >= $4 THEN now() + make_interval(secs => $5) END, now())
ON CONFLICT (integration) DO UPDATE SET
	consecutive_failures = CASE WHEN $2 THEN $3::int ELSE b.consecutive_failures + $3::int END,
	open_until = CASE
		WHEN (CASE WHEN $2 THEN $3::int ELSE b.consecutive_failures + $3::int END) >= $4 THEN now() + make_interval(secs => $5)
		WHEN $2 THEN NULL
		ELSE b.open_until END,
	updated_at = now()
RETURNING open_until`,
	values: [input.integration, input.reset, input.failures, input.threshold, input.coolDownSeconds],
});
