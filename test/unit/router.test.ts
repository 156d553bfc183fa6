import { type IExecuteFunctions, type INodeExecutionData, NodeOperationError } from 'n8n-workflow';
import { ItemError } from '../../lib';
import { forEachItem } from '../../nodes/shared/router';

/** The per-item helper every operation uses for Continue On Fail, with a stand-in for n8n. */
function context(continueOnFail: boolean): IExecuteFunctions {
	const node = {
		id: 'n1',
		name: 'Outbox',
		type: 'n8n-nodes-reliability.transactionalOutbox',
		typeVersion: 1,
		position: [0, 0],
		parameters: {},
	};
	return {
		getNode: () => node,
		continueOnFail: () => continueOnFail,
	} as unknown as IExecuteFunctions;
}

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

	it('waits for each item before the next, so items run in order', async () => {
		const order: number[] = [];
		await forEachItem(
			context(false),
			items,
			async (index) => {
				await new Promise((resolve) => setTimeout(resolve, (items.length - index) * 5));
				order.push(index);
			},
			() => undefined,
		);
		expect(order).toEqual([0, 1, 2]);
	});
});
