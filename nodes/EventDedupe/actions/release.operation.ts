import {
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import {
	checkedEventId,
	ItemError,
	releaseEvents,
	releaseExecutionClaims,
	type Store,
} from '../../../lib';
import { itemValueReader, requiredText } from '../../shared/itemValues';
import { consumerName } from '../../shared/consumer';
import { checkEachItem, outputOfEachChecked } from '../../shared/router';

const properties: INodeProperties[] = [
	{
		displayName: 'Release By',
		name: 'releaseBy',
		type: 'options',
		options: [
			{
				name: 'Execution ID',
				value: 'execution',
				description:
					'Every claim the execution made (the error workflow passes the failed execution)',
			},
			{ name: 'Event ID', value: 'event', description: 'The claims of the given events' },
		],
		default: 'execution',
	},
	{
		displayName: 'Execution ID',
		name: 'executionId',
		type: 'string',
		default: '={{ $json.execution?.id }}',
		description:
			'The execution whose claims to release; in an Error Trigger workflow, the failed execution',
		displayOptions: { show: { releaseBy: ['execution'] } },
	},
	{
		displayName: 'Event ID',
		name: 'releaseEventId',
		type: 'string',
		default: '={{ $json.id }}',
		displayOptions: { show: { releaseBy: ['event'] } },
	},
	{
		displayName: 'Held By Execution',
		name: 'heldByExecution',
		type: 'string',
		default: '={{ $execution.id }}',
		description:
			'Release only claims this execution holds (this one by default; in an Error Trigger workflow, the failed execution). A claim another execution holds is left alone and reported: releasing it would let a redelivery run while that execution still works on the event.',
		displayOptions: { show: { releaseBy: ['event'] } },
	},
];

export const description = updateDisplayOptions({ show: { operation: ['release'] } }, properties);

/**
 * Release: frees claims so a redelivery or a replay is New again. By execution (the error
 * workflow's case: one statement per distinct execution) or by event ID (one statement). A
 * completed event is never released: its work finished. An item without a usable event or
 * execution ID fails the run before anything is released, or with Continue On Fail is its error
 * item while the others are released.
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const by = this.getNodeParameter('releaseBy', 0, 'execution') as string;
	if (by === 'event') {
		const eventIdOf = itemValueReader(this, items, 'releaseEventId');
		const checked = await checkEachItem(this, items, (index) => {
			const eventId = checkedEventId(eventIdOf(index));
			if ('problem' in eventId)
				throw new ItemError(
					`Item ${index} ${eventId.problem}`,
					index,
					'Set Event ID to the ID of the event to release.',
				);
			return eventId.id;
		});
		const heldBy = String(this.getNodeParameter('heldByExecution', 0, '') ?? '').trim();
		if (heldBy === '')
			throw new ItemError(
				'Held By Execution is empty',
				0,
				'Set Held By Execution to the execution whose claims to release: {{ $execution.id }} for this one, {{ $json.execution.id }} in an Error Trigger workflow.',
			);
		const ids = [...checked.passed.values()];
		const released = new Set(
			ids.length === 0 ? [] : await releaseEvents(store, consumerName(this), ids, heldBy),
		);
		return [
			await outputOfEachChecked(this, items, checked, (eventId, index) => ({
				json: {
					...items[index].json,
					_dedupe: {
						eventId,
						released: released.has(eventId),
						...(released.has(eventId) ? {} : { heldBy }),
					},
				},
				pairedItem: { item: index },
			})),
		];
	}
	const executionIdOf = itemValueReader(this, items, 'executionId');
	const checked = await checkEachItem(this, items, (index) =>
		requiredText(
			executionIdOf,
			'execution ID',
			index,
			'Set Execution ID; in an Error Trigger workflow use {{ $json.execution.id }}.',
		),
	);
	const counts = new Map<string, number>();
	for (const executionId of new Set(checked.passed.values()))
		counts.set(executionId, await releaseExecutionClaims(store, executionId));
	return [
		await outputOfEachChecked(this, items, checked, (executionId, index) => ({
			json: {
				...items[index].json,
				_dedupe: { executionId, released: counts.get(executionId) ?? 0 },
			},
			pairedItem: { item: index },
		})),
	];
}
