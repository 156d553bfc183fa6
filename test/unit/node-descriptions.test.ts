import { DeadLetterPark } from '../../nodes/DeadLetterPark/DeadLetterPark.node';
import { EventDedupe } from '../../nodes/EventDedupe/EventDedupe.node';
import { ReliabilityControl } from '../../nodes/ReliabilityControl/ReliabilityControl.node';
import { TransactionalOutbox } from '../../nodes/TransactionalOutbox/TransactionalOutbox.node';
import { flatDescription } from '../helpers/nodeProperties';
import snapshot from './fixtures/node-properties.json';

/**
 * The snapshot holds the parameters of each node as they were before each operation described its
 * own: parameter names, types, defaults, display conditions and order. A node whose operations
 * now describe their own parameters shows the editor exactly the same form.
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
