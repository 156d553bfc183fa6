import { type Store } from '../store';
import { plainText } from '../describe';
import { inRange, LIMITS } from '../limits';
import { storableText } from '../store/storable';
import { statsSql } from './sql';

export interface DeadLetterStats {
	parkedPerDay: Array<{ day: string; parked: number }>;
	openByStatus: Record<string, number>;
	openCount: number;
	oldestWaitSeconds: number | null;
	medianWaitSeconds: number | null;
	/** Mean time from parking to closing, over items parked in the window and closed since. */
	averageResolutionSeconds: number | null;
	topReasons: Array<{ reason: string; count: number }>;
	/** `workflowName` as its open records name it (null when they do not). */
	openByWorkflow: Array<{ workflowId: string; workflowName: string | null; open: number }>;
	openByStep: Array<{ step: string; open: number }>;
	openByOwner: Array<{ owner: string; open: number }>;
}

export async function deadLetterStats(
	store: Store,
	options: { days?: number; workflowId?: string; topReasons?: number } = {},
): Promise<DeadLetterStats> {
	const [row] = await store.query<Record<string, unknown>>(
		statsSql(store, {
			days: inRange(options.days ?? 30, LIMITS.statsDays),
			workflowId: options.workflowId ? storableText(plainText(options.workflowId)) : null,
			topReasons: inRange(options.topReasons ?? 5, {
				label: 'Top reasons',
				min: 0,
				max: 1000,
				integer: true,
			}),
		}),
	);
	return {
		parkedPerDay: row.parked_per_day as DeadLetterStats['parkedPerDay'],
		openByStatus: row.open_by_status as Record<string, number>,
		openCount: row.open_count as number,
		oldestWaitSeconds: row.oldest_wait_seconds as number | null,
		medianWaitSeconds: row.median_wait_seconds as number | null,
		averageResolutionSeconds: row.average_resolution_seconds as number | null,
		topReasons: row.top_reasons as DeadLetterStats['topReasons'],
		openByWorkflow: row.open_by_workflow as DeadLetterStats['openByWorkflow'],
		openByStep: row.open_by_step as DeadLetterStats['openByStep'],
		openByOwner: row.open_by_owner as DeadLetterStats['openByOwner'],
	};
}
