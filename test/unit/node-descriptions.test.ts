import { DeadLetterPark } from '../../nodes/DeadLetterPark/DeadLetterPark.node';
import { EventDedupe } from '../../nodes/EventDedupe/EventDedupe.node';
import { ReliabilityControl } from '../../nodes/ReliabilityControl/ReliabilityControl.node';
import { TransactionalOutbox } from '../../nodes/TransactionalOutbox/TransactionalOutbox.node';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_HOUSEKEEPING } from '../../lib/control/housekeeping';
import { flatDescription } from '../helpers/nodeProperties';
import snapshot from './fixtures/node-properties.json';

/**
 * The snapshot holds the form each node shows in the editor: parameter names, types, defaults,
 * display conditions and order, as the operations assemble it. A change to what a user sees
 * (a parameter moved, renamed or retyped) is a deliberate change of the snapshot, never a side
 * effect of how the operations share their descriptions.
 */
describe('node descriptions assembled from their operations', () => {
	it('Event Dedupe offers the same parameters, in the same order, under the same conditions', () => {
		expect(flatDescription(new EventDedupe().description)).toEqual(snapshot.eventDedupe);
	});

	it('Transactional Outbox offers the same parameters, in the same order, under the same conditions', () => {
		expect(flatDescription(new TransactionalOutbox().description)).toEqual(
			snapshot.transactionalOutbox,
		);
	});

	it('Dead Letter Park offers the same parameters, in the same order, under the same conditions', () => {
		expect(flatDescription(new DeadLetterPark().description)).toEqual(snapshot.deadLetterPark);
	});

	it('Reliability Control offers the same parameters, in the same order, under the same conditions', () => {
		expect(flatDescription(new ReliabilityControl().description)).toEqual(
			snapshot.reliabilityControl,
		);
	});
});

describe("Housekeeping's defaults", () => {
	/**
	 * The node's defaults are literals (n8n's lint wants them so), the library's are what a
	 * purge without options runs with, and the bundled workflow stores its own: all the same.
	 */
	it('are the same in the node, the library and the bundled Housekeeping workflow', () => {
		const control = new ReliabilityControl().description.properties;
		const nodeDefault = (name: string) =>
			control.find(
				(property) =>
					property.name === name &&
					property.displayOptions?.show?.operation?.includes('purgeExpired'),
			)?.default;
		const bundled = JSON.parse(
			readFileSync(join(__dirname, '../../workflows/housekeeping.json'), 'utf8'),
		) as { nodes: Array<{ parameters: Record<string, unknown> }> };
		const purge = bundled.nodes.find((node) => node.parameters.operation === 'purgeExpired');

		for (const name of [
			'retentionDays',
			'historyRetentionDays',
			'statsRetentionDays',
			'sliceSize',
			'restPercent',
		] as const) {
			expect({ name, value: nodeDefault(name) }).toEqual({
				name,
				value: DEFAULT_HOUSEKEEPING[name],
			});
			expect({ name, value: purge?.parameters[name] }).toEqual({
				name,
				value: DEFAULT_HOUSEKEEPING[name],
			});
		}
	});
});
