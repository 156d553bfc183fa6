import { DeadLetterPark } from '../../nodes/DeadLetterPark/DeadLetterPark.node';
import { EventDedupe } from '../../nodes/EventDedupe/EventDedupe.node';
import { ReliabilityControl } from '../../nodes/ReliabilityControl/ReliabilityControl.node';
import { TransactionalOutbox } from '../../nodes/TransactionalOutbox/TransactionalOutbox.node';
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
