import {
	ExecutionBaseError,
	type IExecuteFunctions,
	type INodeExecutionData,
	NodeOperationError,
} from 'n8n-workflow';
import type { Store } from '../../lib';
import { errorItem } from './errorItem';
import { storeFor, toNodeError } from './store';

/** An operation module: `execute` gets the run's store (opened and migrated) and its items. */
export interface Operation {
	execute(
		this: IExecuteFunctions,
		store: Store,
		items: INodeExecutionData[],
	): Promise<INodeExecutionData[][]>;
}

/**
 * Picks the operation named by the `operation` parameter and runs it with the node's store. The
 * one place where what an operation throws becomes the error n8n shows: an engine error becomes a
 * NodeOperationError with its item index and hint; n8n's own errors (a parameter's expression, a
 * credential) pass as they are, since they already say what to show.
 */
export async function routeOperation(
	context: IExecuteFunctions,
	operations: Record<string, Operation>,
): Promise<INodeExecutionData[][]> {
	const operation = context.getNodeParameter('operation', 0) as string;
	const handler = operations[operation];
	if (!handler)
		throw new NodeOperationError(
			context.getNode(),
			`The operation "${operation}" is not supported`,
		);
	return await showingErrors(context, async () =>
		handler.execute.call(context, await storeFor(context), context.getInputData()),
	);
}

/**
 * Runs a node's work (an operation the router picked, the whole run of a node without
 * operations, or a step that reads its settings at one item) so that what it throws reaches n8n
 * as {@link shownError} makes it, an engine error naming `itemIndex` when it names no item.
 */
export async function showingErrors<T>(
	context: IExecuteFunctions,
	run: () => T | Promise<T>,
	itemIndex?: number,
): Promise<T> {
	try {
		return await run();
	} catch (error) {
		throw shownError(context, error, itemIndex);
	}
}

/**
 * The error n8n shows for what an operation threw. n8n's own errors (an expression, a credential)
 * already say what to show, and which item, and pass as they are; an engine error becomes a
 * NodeOperationError with its message, item index (its own, else `itemIndex`) and hint.
 */
const shownError = (
	context: IExecuteFunctions,
	error: unknown,
	itemIndex?: number,
): ExecutionBaseError =>
	error instanceof ExecutionBaseError ? error : toNodeError(context, error, itemIndex);

/**
 * Runs `run` for each item in turn. When it throws, the execution fails with the error n8n shows
 * for it (shownError, with that item's index); with Continue On Fail, `onError` gets the item's error output instead
 * (`{ json: { error, description, itemIndex }, pairedItem }`) and the next item runs. Without
 * `onError` every item must pass, Continue On Fail or not: the check before a batch that runs
 * one statement for all items.
 */
export async function forEachItem(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	run: (itemIndex: number) => void | Promise<void>,
	onError?: (errorOutput: INodeExecutionData, itemIndex: number) => void,
): Promise<void> {
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		try {
			await run(itemIndex);
		} catch (error) {
			if (!onError || !context.continueOnFail()) throw shownError(context, error, itemIndex);
			onError(errorItem(error, itemIndex), itemIndex);
		}
	}
}

/** What one item gives the output: an item, several (in order), or none. */
type ItemOutput = INodeExecutionData | INodeExecutionData[] | undefined;

/**
 * The output of running `run` for each item in turn, as {@link forEachItem}: each item's output
 * items in item order, and with Continue On Fail a failed item's error output in its place.
 */
export async function outputOfEachItem(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	run: (itemIndex: number) => ItemOutput | Promise<ItemOutput>,
): Promise<INodeExecutionData[]> {
	const out: INodeExecutionData[] = [];
	await forEachItem(
		context,
		items,
		async (itemIndex) => {
			const output = await run(itemIndex);
			if (output) out.push(...(Array.isArray(output) ? output : [output]));
		},
		(errorOutput) => out.push(errorOutput),
	);
	return out;
}

/** The items a batch runs for, once each was checked by {@link checkEachItem}. */
export interface CheckedItems<T> {
	/** Each item that passed: its value by item index, in item order. */
	passed: Map<number, T>;
	/** With Continue On Fail, each item that failed: its error output by item index. */
	failed: Map<number, INodeExecutionData>;
}

/**
 * Checks each item with `check`, as {@link forEachItem}, before a batch that runs one statement
 * for the items that passed. Without Continue On Fail the first failing item fails the run
 * before the batch; with it, a failing item keeps its error output and the batch runs for the
 * others.
 */
export async function checkEachItem<T>(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	check: (itemIndex: number) => T | Promise<T>,
): Promise<CheckedItems<T>> {
	const checked: CheckedItems<T> = { passed: new Map(), failed: new Map() };
	await forEachItem(
		context,
		items,
		async (itemIndex) => {
			checked.passed.set(itemIndex, await check(itemIndex));
		},
		(errorOutput, itemIndex) => {
			checked.failed.set(itemIndex, errorOutput);
		},
	);
	return checked;
}

/**
 * The output after a batch of checked items, as {@link outputOfEachItem}: `run` gives each
 * passing item's output from its value, and a failed item has its error output in its place.
 */
export async function outputOfEachChecked<T>(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	checked: CheckedItems<T>,
	run: (value: T, itemIndex: number) => ItemOutput | Promise<ItemOutput>,
): Promise<INodeExecutionData[]> {
	return await outputOfEachItem(
		context,
		items,
		(itemIndex) =>
			checked.failed.get(itemIndex) ?? run(checked.passed.get(itemIndex) as T, itemIndex),
	);
}
