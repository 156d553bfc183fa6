import { OPEN_STATUSES } from '../../lib/deadletter';
import type { Store } from '../../lib/store';
import type { Delivery } from './items';

/** What an item schedule left, for the check: its names and what the actors counted. */
export interface ItemWorld {
	consumer: string;
	/** The consumer of the sub-workflow's claims. */
	subConsumer: string;
	workflowId: string;
	/** The root events: each is one item, with its sub-workflow's claim and its write's letter. */
	items: string[];
	deliveries: Delivery[];
	/** How many times each event's work finished (an execution that ended with it done). */
	completions: Map<string, number>;
	/** How many alerts each letter got (the Error handler's, Recover's). */
	alerts: Map<string, number>;
	writeLetters?: number;
	/** What an actor did that it must never do, seen as it did it. */
	refused: string[];
}

const PERSON_CLOSED = ['resolved', 'abandoned', 'compensated'];

/**
 * The invariants, per item, on the state a schedule left after time passed and Recover had its
 * time, with nothing delivered again:
 * - every delivery ends done, in a letter of its own event, held by its item's letter or done
 *   item (a sub-workflow's claim), or dropped by a named rule (stale under Check Order, Release);
 * - no claim is still in progress, no event's work finished twice, a done event has no open
 *   letter of its own;
 * - one item has at most one open letter (its own, its sub-workflow's, its write's), unless a
 *   delivery of it was released (Release by Event ID drops that delivery by its rule);
 * - no letter is alerted more often than it failed (counting the alerts and failures of the
 *   write letters folded into it), and no failed claim is left that nothing holds;
 * - no execution-level letter for items an inbox kept;
 * - Recover never runs a sub-workflow's item on its own while its caller's item stands for it.
 */
export async function checkItemWorld(store: Store, world: ItemWorld): Promise<string[]> {
	const violations: string[] = [...world.refused];
	const table = store.table('processed_events');
	const claim = async (consumer: string, eventId: string) =>
		(
			await store.query<{
				status: string;
				execution_id: string | null;
				completed_by: string | null;
				settled_as: string | null;
			}>(
				`SELECT status, execution_id, completed_by, settled_as FROM ${table} WHERE consumer = $1 AND event_id = $2`,
				[consumer, eventId],
			)
		)[0];
	const letters = await store.query<{
		id: string;
		idempotency_key: string;
		status: string;
		failure_count: number;
	}>(
		`SELECT id, idempotency_key, status, failure_count FROM ${store.table('dead_letters')} WHERE workflow_id = $1`,
		[world.workflowId],
	);
	const eventKey = (consumer: string, eventId: string) => `event:${consumer}:${eventId}`;
	const isOpen = (status: string) => OPEN_STATUSES.includes(status as never);
	const lettersOf = (key: string, statuses: (status: string) => boolean) =>
		letters.filter((l) => l.idempotency_key === key && statuses(l.status));
	const heldByLetter = (consumer: string, eventId: string) =>
		lettersOf(eventKey(consumer, eventId), (s) => isOpen(s) || PERSON_CLOSED.includes(s)).length >
		0;

	for (const [n, delivery] of world.deliveries.entries()) {
		if (delivery.outcome !== 'new' || delivery.released) continue;
		const row = await claim(delivery.consumer, delivery.eventId);
		// Its event's claim was released by the execution that held it: dropped by that rule.
		if (
			row?.status !== 'in_progress' &&
			world.deliveries.some(
				(d) => d.consumer === delivery.consumer && d.eventId === delivery.eventId && d.released,
			)
		)
			continue;
		if (row?.status === 'done') continue;
		if (heldByLetter(delivery.consumer, delivery.eventId)) continue;
		if (delivery.consumer === world.subConsumer) {
			// A sub-workflow's claim: its item's own letter, or its item done, holds it.
			const root = await claim(world.consumer, delivery.item);
			if (root?.status === 'done' || heldByLetter(world.consumer, delivery.item)) continue;
		}
		violations.push(
			`delivery ${n} (${delivery.execution}, ${delivery.consumer} event ${delivery.eventId}) is silently gone: claim ${row ? `${row.status} by ${row.execution_id} (${row.settled_as ?? 'held by nothing'})` : 'absent'}, no letter holds it`,
		);
	}

	for (const item of world.items) {
		const row = await claim(world.consumer, item);
		const ownOpen = lettersOf(eventKey(world.consumer, item), isOpen);
		// Dropped by Check Order's rule: a letter of an earlier delivery stays for a person.
		if (row?.status === 'done' && row.completed_by !== 'ordering' && ownOpen.length > 0)
			violations.push(`event ${item} is done but ${ownOpen.length} letter(s) of it are still open`);
		for (const [consumer, eventId] of [
			[world.consumer, item],
			[world.subConsumer, `${item}-sub`],
		]) {
			const held = await claim(consumer, eventId);
			if (held?.status === 'in_progress')
				violations.push(
					`${consumer} event ${eventId} is still in progress after Recover had its time`,
				);
			if ((world.completions.get(eventId) ?? 0) > 1)
				violations.push(`event ${eventId} was completed ${world.completions.get(eventId)} times`);
		}
		const open = [
			...ownOpen,
			...lettersOf(eventKey(world.subConsumer, `${item}-sub`), isOpen),
			...lettersOf(`write:${item}`, isOpen),
		];
		// Release by Event ID dropped a delivery of the item by its rule: letters of earlier
		// deliveries stay for a person beside what the released run parked.
		const released = world.deliveries.some((d) => d.item === item && d.released);
		if (open.length > 1 && !released)
			violations.push(
				`item ${item} has ${open.length} open letters: ${open.map((l) => `${l.id} (${l.idempotency_key})`).join(', ')}`,
			);
	}

	// A write letter folded into an item's letter brings its alerts and its failures along.
	const foldedInto = new Map<string, string[]>();
	for (const row of await store.query<{ id: string; into: string }>(
		`SELECT e.dead_letter_id AS id, substring(e.reason from 'folded into dead letter ([0-9]+)') AS into
		 FROM ${store.table('dead_letter_events')} e JOIN ${store.table('dead_letters')} d ON d.id = e.dead_letter_id
		 WHERE d.workflow_id = $1 AND e.reason LIKE 'folded into dead letter %'`,
		[world.workflowId],
	))
		foldedInto.set(String(row.into), [...(foldedInto.get(String(row.into)) ?? []), String(row.id)]);
	const failuresOf = new Map(letters.map((l) => [String(l.id), l.failure_count]));
	for (const letter of letters) {
		const merged = [String(letter.id), ...(foldedInto.get(String(letter.id)) ?? [])];
		const alerts = merged.reduce((sum, id) => sum + (world.alerts.get(id) ?? 0), 0);
		const failures = merged.reduce((sum, id) => sum + (failuresOf.get(id) ?? 0), 0);
		if (alerts > failures)
			violations.push(
				`letter ${letter.id} (${letter.idempotency_key}) was alerted ${alerts} times for ${failures} failure(s), with the letters folded into it`,
			);
	}
	const unheld = await store.query<{ consumer: string; event_id: string }>(
		`SELECT consumer, event_id FROM ${table} WHERE workflow_id = $1 AND status = 'failed' AND settled_as IS NULL AND (payload IS NOT NULL OR payload_bytes IS NOT NULL)`,
		[world.workflowId],
	);
	for (const row of unheld)
		violations.push(`${row.consumer} event ${row.event_id} is failed and nothing holds it`);
	const execLetters = letters.filter((l) => l.idempotency_key.startsWith('execution:'));
	if (execLetters.length > 0)
		violations.push(`${execLetters.length} execution-level letter(s) for items the inbox kept`);
	return violations;
}
