import { ConfigurationError } from '../errors';

/**
 * A small five-field cron (minute hour day-of-month month day-of-week, in UTC) for heartbeat
 * schedules: `*`, numbers, ranges `a-b`, lists `a,b` and steps `*\/n` or `a-b/n`. Enough to say
 * when the next beat is due after the last one.
 */
export interface Cron {
	minutes: Set<number>;
	hours: Set<number>;
	days: Set<number>;
	months: Set<number>;
	weekdays: Set<number>;
	dayRestricted: boolean;
	weekdayRestricted: boolean;
}

function field(text: string, min: number, max: number, name: string): Set<number> {
	const values = new Set<number>();
	for (const part of text.split(',')) {
		const match = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(part.trim());
		if (!match)
			throw new ConfigurationError(
				`Cron ${name} "${part}" is not understood`,
				'Use numbers, ranges (1-5), lists (1,15), steps (*/5) or *.',
			);
		const from = match[1] === '*' ? min : Number(match[2]);
		const to =
			match[1] === '*'
				? max
				: match[3] !== undefined
					? Number(match[3])
					: match[4] !== undefined
						? max
						: from;
		const step = match[4] !== undefined ? Number(match[4]) : 1;
		if (from < min || to > max || from > to || step < 1)
			throw new ConfigurationError(
				`Cron ${name} "${part}" is out of range ${min}-${max}`,
				`Use values from ${min} to ${max}.`,
			);
		for (let v = from; v <= to; v += step) values.add(name === 'day of week' && v === 7 ? 0 : v);
	}
	return values;
}

export function parseCron(expression: string): Cron {
	const parts = expression.trim().split(/\s+/);
	if (parts.length !== 5)
		throw new ConfigurationError(
			`Cron "${expression}" needs five fields`,
			'Write minute hour day-of-month month day-of-week, for example "0 6 * * 1-5" (UTC).',
		);
	return {
		minutes: field(parts[0], 0, 59, 'minute'),
		hours: field(parts[1], 0, 23, 'hour'),
		days: field(parts[2], 1, 31, 'day of month'),
		months: field(parts[3], 1, 12, 'month'),
		weekdays: field(parts[4], 0, 7, 'day of week'),
		dayRestricted: parts[2] !== '*',
		weekdayRestricted: parts[4] !== '*',
	};
}

const dayMatches = (cron: Cron, date: Date): boolean => {
	const day = cron.days.has(date.getUTCDate());
	const weekday = cron.weekdays.has(date.getUTCDay());
	// Classic cron: when both are restricted, either may match.
	if (cron.dayRestricted && cron.weekdayRestricted) return day || weekday;
	return day && weekday;
};

/**
 * The first fire time strictly after `after`, searched day by day, then hour by hour, then minute
 * by minute, over at most four years and a day (so February 29th is found).
 */
export function nextCronTime(cron: Cron, after: Date): Date {
	if (!Number.isFinite(after.getTime()))
		throw new ConfigurationError('The time to search from is not a valid date');
	const t = new Date(after.getTime());
	t.setUTCSeconds(0, 0);
	t.setUTCMinutes(t.getUTCMinutes() + 1);
	const limit = after.getTime() + (4 * 365 + 2) * 24 * 3600_000;
	while (t.getTime() <= limit) {
		if (!cron.months.has(t.getUTCMonth() + 1) || !dayMatches(cron, t)) {
			t.setUTCHours(0, 0, 0, 0);
			t.setUTCDate(t.getUTCDate() + 1);
			continue;
		}
		if (!cron.hours.has(t.getUTCHours())) {
			t.setUTCMinutes(0);
			t.setUTCHours(t.getUTCHours() + 1);
			continue;
		}
		if (cron.minutes.has(t.getUTCMinutes())) return t;
		t.setUTCMinutes(t.getUTCMinutes() + 1);
	}
	throw new ConfigurationError(
		'Cron never fires: no date has that day of the month in those months',
		'Check the day-of-month and month fields (for example, February has no 30th).',
	);
}
