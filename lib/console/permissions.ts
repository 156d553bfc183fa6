import { ConfigurationError } from '../errors';

/**
 * Who may act on which dead letter. Without a teams map every signed-in operator may act on
 * every item (one team runs the console). With one, an operator acts on the items owned by one of
 * their teams, and on items without an owner; `*` among an operator's teams means every item.
 * Anyone not in the map sees the console read-only. Pausing and resuming an integration touches
 * every team's items: it takes an operator in the map.
 */
export type Teams = Record<string, string[]>;

/** Everyone: the name a teams map uses for an operator who may act on every item. */
const EVERY_TEAM = '*';

const EXAMPLE = '{"maria": ["sales-ops"], "lee": ["finance", "platform"], "ops-lead": ["*"]}';

/** The Teams option, checked: a JSON object of operator → list of team names (text or parsed). */
export function checkedTeams(value: unknown): Teams | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	let parsed = value;
	if (typeof value === 'string') {
		if (!value.trim()) return undefined;
		try {
			parsed = JSON.parse(value);
		} catch {
			throw new ConfigurationError(
				'Teams is not valid JSON',
				`Set it to an object of operator → teams, e.g. ${EXAMPLE}, or leave it empty.`,
			);
		}
	}
	if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
		throw new ConfigurationError(
			'Teams must be a JSON object of operator → list of teams',
			`For example ${EXAMPLE}.`,
		);
	// No prototype: an operator named "constructor" or "__proto__" is just a name.
	const teams: Teams = Object.create(null) as Teams;
	for (const [operator, list] of Object.entries(parsed as Record<string, unknown>)) {
		const names = typeof list === 'string' ? [list] : list;
		if (!Array.isArray(names) || !names.every((n) => typeof n === 'string' && n.trim()))
			throw new ConfigurationError(
				`Teams: the teams of operator "${operator}" must be a list of team names`,
				`For example ${EXAMPLE}.`,
			);
		teams[operator] = (names as string[]).map((n) => n.trim());
	}
	return teams;
}

/** Why the operator may not act on an item of this owner, or undefined when they may. */
export function refusalFor(
	teams: Teams | undefined,
	operator: string,
	owner: unknown,
): string | undefined {
	if (!teams) return undefined;
	const team = typeof owner === 'string' ? owner.trim() : '';
	const mine = Object.hasOwn(teams, operator) ? teams[operator] : undefined;
	if (!mine) return `${operator} is in no team of this console, so it is read-only for them`;
	if (!team || mine.includes(EVERY_TEAM) || mine.includes(team)) return undefined;
	return `this item belongs to team ${team}, and ${operator} is in ${mine.join(', ')}`;
}

/**
 * The teams whose items the operator may act on, for a statement's filter: undefined when the
 * operator may act on every item (no teams map, or `*`). Items without an owner are everyone's.
 */
export function teamsActedFor(teams: Teams | undefined, operator: string): string[] | undefined {
	if (!teams) return undefined;
	const mine = Object.hasOwn(teams, operator) ? teams[operator] : [];
	return mine.includes(EVERY_TEAM) ? undefined : mine;
}

/** Why the operator may not pause or resume an integration, or undefined when they may. */
export function controlRefusal(teams: Teams | undefined, operator: string): string | undefined {
	if (!teams || Object.hasOwn(teams, operator)) return undefined;
	return `${operator} is in no team of this console, so it is read-only for them`;
}

/** The teams map of options already checked by the console (text is checked again). */
export function teamsOf(options: { teams?: Teams | string }): Teams | undefined {
	return typeof options.teams === 'string' ? checkedTeams(options.teams) : options.teams;
}
