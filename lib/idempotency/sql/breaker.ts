import type { Store } from '../../store';

/**
 * Folds a run's streak into integration $1's breaker row: when $2 (the run saw a success) the
 * streak becomes the $3 failures after it, else $3 adds to the stored streak; open for the
 * cool-down ($5 seconds) once the streak reaches the threshold $4, close on a success.
 */
export const recordBreakerSql = (store: Store): string => `
INSERT INTO ${store.table('breakers')} AS b (integration, consecutive_failures, open_until, updated_at)
VALUES ($1, $3::int, CASE WHEN $3::int >= $4 THEN now() + make_interval(secs => $5) END, now())
ON CONFLICT (integration) DO UPDATE SET
	consecutive_failures = CASE WHEN $2 THEN $3::int ELSE b.consecutive_failures + $3::int END,
	open_until = CASE
		WHEN (CASE WHEN $2 THEN $3::int ELSE b.consecutive_failures + $3::int END) >= $4 THEN now() + make_interval(secs => $5)
		WHEN $2 THEN NULL
		ELSE b.open_until END,
	updated_at = now()
RETURNING open_until`;
