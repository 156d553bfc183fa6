import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import type { SqlStatement } from '../../../lib';

/**
 * The Postgres node's conventions for a statement, so a query moves between the two nodes
 * unchanged: `{{ }}` in the query text is replaced by its value's text; Query Parameters is a
 * comma-separated list bound to $1, $2, ... (an entry that is one expression keeps its value's
 * type) or one expression that returns an array. Commas inside `{{ }}` do not split.
 */
const RESOLVABLE = /{{[\s\S]*?}}/g;

export function splitParameters(raw: string): string[] {
	const entries: string[] = [];
	let current = '';
	let depth = 0;
	for (let i = 0; i < raw.length; i++) {
		if (raw.startsWith('{{', i)) {
			depth++;
			current += '{{';
			i++;
		} else if (raw.startsWith('}}', i) && depth > 0) {
			depth--;
			current += '}}';
			i++;
		} else if (raw[i] === ',' && depth === 0) {
			entries.push(current);
			current = '';
		} else current += raw[i];
	}
	entries.push(current);
	return entries.map((entry) => entry.trim()).filter((entry) => entry !== '');
}

export function statementOf(
	context: IExecuteFunctions,
	itemIndex: number,
	position: number,
): SqlStatement {
	const raw = (
		(context.getNode().parameters.statements as IDataObject | undefined)?.statement as
			IDataObject[] | undefined
	)?.[position];
	const rawQuery = String(raw?.query ?? '');
	const text = rawQuery.startsWith('=')
		? String(context.getNodeParameter(`statements.statement[${position}].query`, itemIndex))
		: rawQuery.replace(RESOLVABLE, (resolvable) =>
				String(context.evaluateExpression(resolvable, itemIndex)),
			);

	const evaluated = context.getNodeParameter(
		`statements.statement[${position}].queryParameters`,
		itemIndex,
		'',
	);
	if (Array.isArray(evaluated)) return { text, values: evaluated };
	const rawParameters = String(raw?.queryParameters ?? '').replace(/^=+/, '');
	const values = splitParameters(rawParameters).map((entry) =>
		entry.match(RESOLVABLE) ? context.evaluateExpression(entry, itemIndex) : entry,
	);
	return { text, values };
}
