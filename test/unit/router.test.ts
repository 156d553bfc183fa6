import { ExpressionError, type INodeExecutionData, NodeOperationError } from 'n8n-workflow';
import { ItemError } from '../../lib';
import {
	checkEachItem,
	forEachItem,
	outputOfEachChecked,
	outputOfEachItem,
} from '../../nodes/shared/router';
import { executeFunctions } from '../helpers/executeFunctions';
import { sleep } from '../helpers/sleep';

/** The per-item helper every operation uses for Continue On Fail, with a stand-in for n8n. */
const context = (continueOnFail: boolean) =>
	executeFunctions({
		name: 'Outbox',
		type: 'n8n-nodes-reliability.transactionalOutbox',
		continueOnFail,
	});

const items: INodeExecutionData[] = [{ json: { n: 0 } }, { json: { n: 1 } }, { json: { n: 2 } }];

const failSecond = (done: number[]) => (index: number) => {
	if (index === 1) throw new ItemError(`Item ${index} has no message ID`, index, 'Map Message ID.');
	done.push(index);
};

describe('each item in turn', () => {
	it('without Continue On Fail, the first failing item ends the run with its index and hint', async () => {
		const done: number[] = [];
		const failed = forEachItem(context(false), items, failSecond(done), () => undefined);
		await expect(failed).rejects.toBeInstanceOf(NodeOperationError);
		await expect(failed).rejects.toMatchObject({
			message: 'Item 1 has no message ID',
			description: 'Map Message ID.',
			context: { itemIndex: 1 },
		});
		expect(done).toEqual([0]);
	});

	it('an error from outside the engine still names the item that raised it', async () => {
		const run = () => {
			throw new TypeError('boom');
		};
		await expect(forEachItem(context(false), items, run, () => undefined)).rejects.toMatchObject({
			message: 'boom',
			context: { itemIndex: 0 },
		});
	});

	it("n8n's own error (an item's expression) ends the run as it is, not wrapped", async () => {
		const expressionError = new ExpressionError('invalid syntax', { itemIndex: 2 });
		const run = (index: number) => {
			if (index === 2) throw expressionError;
		};
		await expect(forEachItem(context(false), items, run, () => undefined)).rejects.toBe(
			expressionError,
		);
	});

	it('with Continue On Fail, a failing item becomes its error output and the next items still run', async () => {
		const done: number[] = [];
		const errors: Array<[INodeExecutionData, number]> = [];
		await forEachItem(context(true), items, failSecond(done), (errorOutput, index) =>
			errors.push([errorOutput, index]),
		);
		expect(done).toEqual([0, 2]);
		expect(errors).toEqual([
			[
				{
					json: { error: 'Item 1 has no message ID', description: 'Map Message ID.', itemIndex: 1 },
					pairedItem: { item: 1 },
				},
				1,
			],
		]);
	});

	it("with Continue On Fail, the error output of n8n's own error carries its description too", async () => {
		const errors: INodeExecutionData[] = [];
		const run = (index: number) => {
			if (index === 1)
				throw new NodeOperationError(context(true).getNode(), 'Item 1: the payload is not JSON', {
					itemIndex: 1,
					description: 'Write the payload as a JSON object.',
				});
		};
		await forEachItem(context(true), items, run, (errorOutput) => errors.push(errorOutput));
		expect(errors).toEqual([
			{
				json: {
					error: 'Item 1: the payload is not JSON',
					description: 'Write the payload as a JSON object.',
					itemIndex: 1,
				},
				pairedItem: { item: 1 },
			},
		]);
	});

	it('waits for each item before the next, so items run in order', async () => {
		const order: number[] = [];
		await forEachItem(
			context(false),
			items,
			async (index) => {
				await sleep((items.length - index) * 5);
				order.push(index);
			},
			() => undefined,
		);
		expect(order).toEqual([0, 1, 2]);
	});
});

describe("each item's output", () => {
	const outputOf = (index: number) =>
		index === 1
			? (() => {
					throw new ItemError(`Item ${index} has no message ID`, index, 'Map Message ID.');
				})()
			: index === 2
				? [
						{ json: { n: 2, part: 'a' }, pairedItem: { item: 2 } },
						{ json: { n: 2, part: 'b' }, pairedItem: { item: 2 } },
					]
				: { json: { n: index }, pairedItem: { item: index } };

	it('with Continue On Fail, a failed item has its error output in its place, in item order', async () => {
		expect(await outputOfEachItem(context(true), items, outputOf)).toEqual([
			{ json: { n: 0 }, pairedItem: { item: 0 } },
			{
				json: { error: 'Item 1 has no message ID', description: 'Map Message ID.', itemIndex: 1 },
				pairedItem: { item: 1 },
			},
			{ json: { n: 2, part: 'a' }, pairedItem: { item: 2 } },
			{ json: { n: 2, part: 'b' }, pairedItem: { item: 2 } },
		]);
	});

	it('without Continue On Fail, the failed item ends the run with its index', async () => {
		await expect(outputOfEachItem(context(false), items, outputOf)).rejects.toMatchObject({
			message: 'Item 1 has no message ID',
			context: { itemIndex: 1 },
		});
	});

	it('an item that gives nothing adds nothing', async () => {
		expect(await outputOfEachItem(context(false), items, () => undefined)).toEqual([]);
	});
});

describe('every item must pass', () => {
	it('without an error output, a failing item ends the run even with Continue On Fail', async () => {
		const done: number[] = [];
		await expect(forEachItem(context(true), items, failSecond(done))).rejects.toMatchObject({
			message: 'Item 1 has no message ID',
			context: { itemIndex: 1 },
		});
		expect(done).toEqual([0]);
	});
});

describe('items checked before a batch', () => {
	const check = (index: number) => {
		if (index === 1) throw new ItemError(`Item ${index} has no event ID`, index, 'Set Event ID.');
		return `evt-${index}`;
	};

	it('with Continue On Fail, the batch runs for the items that passed and a failed item keeps its error output in its place', async () => {
		const checked = await checkEachItem(context(true), items, check);
		expect([...checked.passed]).toEqual([
			[0, 'evt-0'],
			[2, 'evt-2'],
		]);
		expect(
			await outputOfEachChecked(context(true), items, checked, (value, index) => ({
				json: { value },
				pairedItem: { item: index },
			})),
		).toEqual([
			{ json: { value: 'evt-0' }, pairedItem: { item: 0 } },
			{
				json: { error: 'Item 1 has no event ID', description: 'Set Event ID.', itemIndex: 1 },
				pairedItem: { item: 1 },
			},
			{ json: { value: 'evt-2' }, pairedItem: { item: 2 } },
		]);
	});

	it('without Continue On Fail, the first failing item ends the run before the batch', async () => {
		await expect(checkEachItem(context(false), items, check)).rejects.toMatchObject({
			message: 'Item 1 has no event ID',
			description: 'Set Event ID.',
			context: { itemIndex: 1 },
		});
	});
});
