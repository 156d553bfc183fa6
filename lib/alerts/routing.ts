import { ConfigurationError } from '../errors';

/**
 * Where an alert goes: a page (money and customer-facing impact, at any hour), the owner's channel
 * (everything else, in the owner's working hours), or the daily digest (everything else, outside
 * them). With nothing configured every alert goes to the channel, at any hour.
 */
export const ImpactClass = {
	money: 'money',
	customer: 'customer',
	internal: 'internal',
	/** No rule names the item's integration or workflow. */
	unclassified: 'unclassified',
} as const;
export type ImpactClass = (typeof ImpactClass)[keyof typeof ImpactClass];

export const AlertRoute = { page: 'page', channel: 'channel', digest: 'digest' } as const;
export type AlertRoute = (typeof AlertRoute)[keyof typeof AlertRoute];

/** An impact rule: items of this integration, workflow ID or workflow name have this class. */
export interface ImpactRule {
	match: string;
	impact: ImpactClass;
}

/** An owner's working hours: days of the week (0 Sunday to 6 Saturday) and minutes of the day. */
export interface OwnerHours {
	owner: string;
	days: number[];
	fromMinute: number;
	toMinute: number;
	timeZone: string;
}

const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

/**
 * Parses "Mon-Fri 09:00-17:00" (days as a range or a comma list, then a time range; "Mon-Sun"
 * for every day; a range that ends before it starts runs past midnight) in an IANA time zone.
 */
export function parseWorkingHours(owner: string, hours: string, timeZone: string): OwnerHours {
	const problem = (what: string) =>
		new ConfigurationError(
			`Working hours of owner "${owner}" ${what}: "${hours}"`,
			'Write days and a time range, e.g. "Mon-Fri 09:00-17:00" or "Mon,Wed,Fri 08:30-12:00", and an IANA time zone such as Europe/Berlin.',
		);
	try {
		new Intl.DateTimeFormat('en-US', { timeZone }).format(0);
	} catch {
		throw new ConfigurationError(
			`Time zone "${timeZone}" of owner "${owner}" is not an IANA time zone`,
			'Use a name such as Europe/Berlin, America/New_York or UTC.',
		);
	}
	const match = /^\s*([A-Za-z,\s-]+?)\s+(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})\s*$/.exec(hours);
	if (!match) throw problem('cannot be read');
	const days = new Set<number>();
	for (const part of match[1].split(',')) {
		const [from, to] = part
			.trim()
			.toLowerCase()
			.split('-')
			.map((d) => DAYS.indexOf(d.trim().slice(0, 3)));
		if (from < 0 || (to !== undefined && to < 0)) throw problem('name a day that does not exist');
		for (let d = from; ; d = (d + 1) % 7) {
			days.add(d);
			if (to === undefined || d === to) break;
		}
	}
	const [fh, fm, th, tm] = match.slice(2).map(Number);
	if (fh > 24 || th > 24 || fm > 59 || tm > 59) throw problem('have a time that does not exist');
	return {
		owner,
		days: [...days].sort(),
		fromMinute: fh * 60 + fm,
		toMinute: th * 60 + tm,
		timeZone,
	};
}

/** Whether `at` is inside the owner's working hours, in the owner's time zone. */
export function inWorkingHours(hours: OwnerHours, at: Date): boolean {
	const parts = new Intl.DateTimeFormat('en-US', {
		timeZone: hours.timeZone,
		weekday: 'short',
		hour: '2-digit',
		minute: '2-digit',
		hourCycle: 'h23',
	}).formatToParts(at);
	const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
	const day = DAYS.indexOf(part('weekday').toLowerCase());
	const minute = Number(part('hour')) * 60 + Number(part('minute'));
	if (hours.fromMinute <= hours.toMinute)
		return hours.days.includes(day) && minute >= hours.fromMinute && minute < hours.toMinute;
	// Past midnight: the evening part belongs to the listed day, the morning to the day after.
	if (minute >= hours.fromMinute) return hours.days.includes(day);
	return minute < hours.toMinute && hours.days.includes((day + 6) % 7);
}

/** The impact class of an item: the first rule naming its integration, workflow ID or name. */
export function impactOf(
	rules: ImpactRule[],
	item: { integration?: string | null; workflowId?: string | null; workflowName?: string | null },
): ImpactClass {
	const names = [item.integration, item.workflowId, item.workflowName]
		.filter((n): n is string => Boolean(n))
		.map((n) => n.toLowerCase());
	return (
		rules.find((rule) => names.includes(rule.match.trim().toLowerCase()))?.impact ??
		ImpactClass.unclassified
	);
}

/** The route of a new issue, decided when it opens. */
export function routeOf(impact: ImpactClass, hours: OwnerHours | undefined, at: Date): AlertRoute {
	if (impact === ImpactClass.money || impact === ImpactClass.customer) return AlertRoute.page;
	if (impact === ImpactClass.unclassified || !hours) return AlertRoute.channel;
	return inWorkingHours(hours, at) ? AlertRoute.channel : AlertRoute.digest;
}
