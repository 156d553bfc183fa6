import type { DeadLetterStatus } from '../deadletter/statuses';
import { OPEN_STATUSES } from '../deadletter/statuses';
import type { ListFilter } from '../deadletter';
import { LIMITS } from '../limits';
import { maskText } from '../masking';
import { str } from './values';

/** The dead-letter list's filters: read from a query or a batch form, turned into a store filter. */
export interface Filters {
	status: string;
	workflow: string;
	step: string;
	reason: string;
	owner: string;
	ageHours: string;
	search: string;
	/** An alert issue's ID: its items (the link every grouped alert carries). */
	issue: string;
}

export function filtersOf(source: Record<string, unknown>): Filters {
	return {
		status: str(source.status) || 'open',
		workflow: str(source.workflow),
		step: str(source.step),
		reason: str(source.reason),
		owner: str(source.owner),
		ageHours: str(source.age),
		// Shown in its box and in links, so masked like what it searches (stored messages are).
		search: maskText(str(source.search)),
		issue: /^\d{1,18}$/.test(str(source.issue)) ? str(source.issue) : '',
	};
}

export function listFilter(filters: Filters, limit: number): ListFilter {
	const hours = Number(filters.ageHours);
	return {
		statuses:
			filters.status === 'open'
				? OPEN_STATUSES
				: filters.status === 'all'
					? undefined
					: [filters.status as DeadLetterStatus],
		workflowId: filters.workflow || undefined,
		step: filters.step || undefined,
		errorClass: filters.reason || undefined,
		owner: filters.owner || undefined,
		// A filter typed on the page: beyond the longest age the store keeps, it means "all".
		olderThanMinutes:
			Number.isFinite(hours) && hours > 0
				? Math.min(hours * 60, LIMITS.olderThanMinutes.max)
				: undefined,
		search: filters.search || undefined,
		issueId: filters.issue || undefined,
		limit,
	};
}

export const filterParams = (f: Filters) => ({
	status: f.status === 'open' ? undefined : f.status,
	workflow: f.workflow,
	step: f.step,
	reason: f.reason,
	owner: f.owner,
	age: f.ageHours,
	search: f.search,
	issue: f.issue,
});
