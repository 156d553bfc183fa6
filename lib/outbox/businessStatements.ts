import { ItemError, StoreUnavailableError } from '../errors';
import { type Store, sqlStateOf, toStoreError, type Transaction } from '../store';

/** The user's business statements of a Write: run in the node's transaction, one item at a time. */

/** One of the user's SQL statements: text with $1, $2... and the values bound to them. */
export interface SqlStatement {
	text: string;
	values: unknown[];
}

/** What one statement returned. */
export interface StatementResult {
	rowCount: number;
	rows: Array<Record<string, unknown>>;
}

/** A business statement failed: its item wrote nothing, neither rows nor messages. */
export class StatementFailedError extends ItemError {
	constructor(
		message: string,
		itemIndex: number,
		hint: string,
		readonly sqlState: string | undefined,
		cause: unknown,
	) {
		super(message, itemIndex, hint);
		this.cause = cause;
	}
}

/** Statements run inside the node's transaction; one that ends or opens a transaction would break it. */
const TRANSACTION_CONTROL =
	/^\s*(begin|commit|rollback|end|abort|start\s+transaction|savepoint|release|prepare\s+transaction)\b/i;

function refuseTransactionControl(statement: SqlStatement, itemIndex: number, position: number) {
	if (statement.text.split(';').some((part) => TRANSACTION_CONTROL.test(part)))
		throw new ItemError(
			`Item ${itemIndex}, statement ${position + 1} controls the transaction itself`,
			itemIndex,
			'The node runs the statements and the messages in one transaction of its own; remove BEGIN, COMMIT, ROLLBACK and SAVEPOINT from the statements.',
		);
}

/** Runs an item's statements in order; the first that fails ends the item with what Postgres said. */
export async function runStatements(
	outbox: Store,
	tx: Transaction,
	itemIndex: number,
	statements: SqlStatement[],
): Promise<StatementResult[]> {
	const results: StatementResult[] = [];
	for (const [position, statement] of statements.entries()) {
		refuseTransactionControl(statement, itemIndex, position);
		try {
			const answer = await tx.execute(statement);
			// A text of several statements (possible without parameters) reports no rows.
			results.push({ rowCount: answer.rowCount, rows: answer.rows ?? [] });
		} catch (error) {
			throw statementError(outbox, error, itemIndex, position);
		}
	}
	return results;
}

function statementError(
	outbox: Store,
	error: unknown,
	itemIndex: number,
	position: number,
): unknown {
	const mapped = toStoreError(error, outbox.config);
	if (mapped instanceof StoreUnavailableError) return mapped;
	const code = sqlStateOf(error);
	const e = error as { message?: string; detail?: string; hint?: string };
	return new StatementFailedError(
		`Item ${itemIndex}: statement ${position + 1} failed: ${e.message ?? String(error)}${code ? ` (SQLSTATE ${code})` : ''}`,
		itemIndex,
		[
			e.detail,
			e.hint,
			'Nothing of this item was written: neither its rows nor its outbox messages.',
		]
			.filter(Boolean)
			.join(' '),
		code,
		error,
	);
}
