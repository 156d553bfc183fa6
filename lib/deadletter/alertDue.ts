import type { Store } from '../store';
import { markAlertDueSql, takeDueAlertsSql, unalertedLettersSql } from './sql';

/**
 * Alerts that no workflow sends at the park: a stopped execution's items, parked by Event Dedupe's
 * end-of-execution hook, and the failures of a write whose execution was stopped (no output of a
 * stopped node runs, so the Alert after it never does). Such letters carry `alert_due`; the
 * bundled Recover workflow takes them every minute and sends their alerts.
 */

/**
 * The letters a stopped run parked (by ID: a letter an earlier iteration of a loop parked and
 * alerted is not alerted again): their alert is due, since the run's outputs never run. Not when
 * the execution's items are kept by an inbox (Event Dedupe v2: claims with their payload, in
 * progress or already failed by the hook, which runs while the write is still finishing): the
 * end-of-execution hook parks each of those items as stopped with its alert due, and one alert
 * per item is enough.
 */
export async function markAlertDue(
	store: Store,
	letters: { executionId: string; ids: string[] },
): Promise<number> {
	const result = await store.execute(
		markAlertDueSql(store, { executionId: letters.executionId, ids: letters.ids }),
	);
	return result.rowCount;
}

/** A letter whose alert is due, in the columns an alert is composed from. */
export interface DueAlert {
	id: string;
	workflow_id: string;
	workflow_name: string | null;
	execution_id: string | null;
	step: string;
	item_index: number | null;
	idempotency_key: string | null;
	run_link: string | null;
	error_class: string;
	error_message: string | null;
	already_happened: string | null;
	impact: string | null;
	owner: string | null;
	severity: string;
	status: string;
	attempt_history: unknown;
}

/**
 * Takes up to `limit` letters whose alert is due, oldest first, and clears it in the same
 * statement: each is alerted once (at most once: a run that dies before its Alert leaves the
 * letter to the console and the daily digest, never to a second page). A letter that left `new`
 * meanwhile (replayed, resolved, held) needs no alert and is cleared too.
 */
export async function takeDueAlerts(
	store: Store,
	limit: number,
	workflowId?: string,
): Promise<DueAlert[]> {
	return await store.query<DueAlert>(
		takeDueAlertsSql(store, { limit, workflowId: workflowId ?? null }),
	);
}

/**
 * Letters waiting for a person that no alert took: `new`, in no issue, no alert due, parked in
 * the last day and unchanged for `graceSeconds`. They are what a run that died between its park
 * and its Alert left (n8n killed while the Error handler or the workflow's own Alert ran, a
 * Recover run killed after it took due alerts): without this pass only the console and the
 * daily digest would show them. Read, not taken: Notify puts each in its cause's issue, which
 * is what ends it here, and an issue pages once however many times its letters reach Notify,
 * so a slow Alert that finishes after this pass sends no second page. A letter of an execution
 * whose items an inbox kept is left to the inbox's own letter (one alert per item, as the
 * end-of-execution hook's letters are).
 */
export async function unalertedLetters(
	store: Store,
	options: { limit: number; graceSeconds?: number; workflowId?: string },
): Promise<DueAlert[]> {
	return await store.query<DueAlert>(
		unalertedLettersSql(store, {
			limit: options.limit,
			graceSeconds: options.graceSeconds ?? 120,
			workflowId: options.workflowId ?? null,
		}),
	);
}
