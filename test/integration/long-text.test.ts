import { randomBytes } from 'node:crypto';
import type { INodeExecutionData } from 'n8n-workflow';
import { parkItems } from '../../lib/deadletter';
import { claimEvents, ClaimMode } from '../../lib/dedupe';
import {
	DEFAULT_POLICY,
	runWrites,
	type SendResult,
	type WriteContext,
	type WriteRequest,
} from '../../lib/idempotency';
import { execute as claim } from '../../nodes/EventDedupe/actions/claim.operation';
import { execute as park } from '../../nodes/DeadLetterPark/actions/park.operation';
import { adminQuery, credentialData, testStore } from '../helpers/store';
import { executeFunctions } from '../helpers/executeFunctions';
import { writeContext } from '../helpers/writeContext';
import { writeRequest } from '../helpers/writeRequest';

/**
 * Text that does not compress, longer than a btree index row can hold (2,704 bytes): one such
 * value in an indexed column fails the whole statement, and with it every item of the batch.
 * Each long value must end its own item (or be stored as its hash), never the others'.
 */
const { store, schema, cleanup } = testStore('long_text');
afterAll(cleanup);

/** Random text: pglz finds nothing to compress in it, as in a real token or blob. */
const incompressible = (chars: number): string =>
	randomBytes(chars).toString('base64').slice(0, chars);

describe('a write with one long text', () => {
	let execution = 0;
	const context = (): WriteContext =>
		writeContext({
			workflowId: 'wf-long',
			executionId: `exec-long-${++execution}`,
			node: 'Create Order',
			policy: { ...DEFAULT_POLICY, baseDelayMs: 10, maxDelayMs: 20, deadlineMs: 5_000 },
		});
	const write = (key: string, index: number, itemRef?: string) =>
		writeRequest({ index, scope: 'shop', key, url: '/orders', body: { key }, itemRef });
	const sender = () => {
		const sent: string[] = [];
		const send = async (request: WriteRequest): Promise<SendResult> => {
			sent.push(request.key);
			return { kind: 'response', answer: { status: 201, headers: {}, body: { id: request.key } } };
		};
		return { sent, send };
	};
	const records = (prefix: string) =>
		adminQuery<{ key: string; status: string }>(
			`SELECT key, status FROM "${schema}".idempotency_keys WHERE key LIKE $1 ORDER BY key`,
			[`${prefix}%`],
		);

	it('a long Item Reference refuses its own item before anything is sent, and the others succeed', async () => {
		const { sent, send } = sender();
		const outcomes = await runWrites(
			store,
			context(),
			[
				write('ref-a', 0, 'order-1'),
				write('ref-b', 1, incompressible(4_000)),
				write('ref-c', 2, 'order-3'),
			],
			{ send },
		);
		expect(outcomes.map((o) => o.ok)).toEqual([true, false, true]);
		expect(outcomes[1].failure).toMatchObject({
			class: 'invalid',
			message: expect.stringMatching(
				/^Item 1: Item Reference is 4,000 characters long, more than the 255 it may have/,
			),
		});
		expect(sent.sort()).toEqual(['ref-a', 'ref-c']);
		expect(await records('ref-')).toEqual([
			{ key: 'ref-a', status: 'succeeded' },
			{ key: 'ref-c', status: 'succeeded' },
		]);
		const letters = await adminQuery<{ item_index: number; error_class: string }>(
			`SELECT item_index, error_class FROM "${schema}".dead_letters WHERE execution_id = $1`,
			[`exec-long-${execution}`],
		);
		expect(letters).toEqual([{ item_index: 1, error_class: 'invalid' }]);
	});

	it('a long key given to the engine unhashed ends its own item, parked without it, and the others keep their outputs', async () => {
		const { sent, send } = sender();
		const outcomes = await runWrites(
			store,
			context(),
			[write('raw-a', 0), write(`raw-${incompressible(3_000)}`, 1), write('raw-c', 2)],
			{ send },
		);
		expect(outcomes.map((o) => o.ok)).toEqual([true, false, true]);
		expect(outcomes[1].failure?.message).toMatch(
			/^Item 1: the idempotency key is longer than 255 characters/,
		);
		expect(sent.sort()).toEqual(['raw-a', 'raw-c']);
		expect((await records('raw-')).map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
		const letters = await adminQuery<{ item_index: number; idempotency_key: string | null }>(
			`SELECT item_index, idempotency_key FROM "${schema}".dead_letters WHERE execution_id = $1`,
			[`exec-long-${execution}`],
		);
		expect(letters).toEqual([{ item_index: 1, idempotency_key: null }]);
	});
});

/** n8n's IExecuteFunctions as far as these nodes use it. */
const nodeContext = (
	name: string,
	parameters: Record<string, unknown>,
	items: INodeExecutionData[],
	continueOnFail: boolean,
) =>
	executeFunctions({
		name,
		parameters,
		items,
		continueOnFail,
		workflow: { id: 'wf-long-node', name: 'Long text' },
		executionId: 'exec-long-node',
		previousNode: 'Post Order',
		credentials: () => credentialData(schema),
	});

describe('a park with one long text', () => {
	const letters = (workflowId: string) =>
		adminQuery<{ item_index: number; idempotency_key: string | null; step: string }>(
			`SELECT item_index, idempotency_key, step FROM "${schema}".dead_letters
			 WHERE workflow_id = $1 ORDER BY item_index`,
			[workflowId],
		);

	it('a long Idempotency Key refuses its own item, naming it, and the other item is parked', async () => {
		const items: INodeExecutionData[] = [
			{ json: { key: 'order-1:create' } },
			{ json: { key: incompressible(3_000) } },
		];
		const parameters = {
			idempotencyKey: '={{ $json.key }}',
			parkOptions: { workflowId: 'wf-park-key' },
		};
		const [out] = await park.call(nodeContext('Park', parameters, items, true), store, items);
		expect(out[0].json._deadLetter).toMatchObject({ status: 'new' });
		expect(out[1]).toMatchObject({
			json: {
				error: expect.stringMatching(
					/^Item 1: Idempotency Key is 3,000 characters long, more than the 255 it may have$/,
				),
				itemIndex: 1,
			},
			pairedItem: { item: 1 },
		});
		expect(await letters('wf-park-key')).toEqual([
			{ item_index: 0, idempotency_key: 'order-1:create', step: 'Post Order' },
		]);
	});

	it('a long Step refuses its own item, naming it, and the other item is parked', async () => {
		const items: INodeExecutionData[] = [
			{ json: { step: 'Post Order' } },
			{ json: { step: incompressible(3_000) } },
		];
		const parameters = {
			step: '={{ $json.step }}',
			parkOptions: { workflowId: 'wf-park-step' },
		};
		const [out] = await park.call(nodeContext('Park', parameters, items, true), store, items);
		expect(out[1].json.error).toMatch(/^Item 1: Step is 3,000 characters long/);
		expect(await letters('wf-park-step')).toEqual([
			{ item_index: 0, idempotency_key: null, step: 'Post Order' },
		]);
	});

	it('without Continue On Fail the run fails on the long item, naming it, before anything is parked', async () => {
		const items: INodeExecutionData[] = [
			{ json: { step: 'Post Order' } },
			{ json: { step: incompressible(3_000) } },
		];
		const parameters = { step: '={{ $json.step }}', parkOptions: { workflowId: 'wf-park-fail' } };
		await expect(
			park.call(nodeContext('Park', parameters, items, false), store, items),
		).rejects.toMatchObject({
			message: expect.stringMatching(/^Item 1: Step is 3,000 characters long/),
			context: { itemIndex: 1 },
		});
		expect(await letters('wf-park-fail')).toEqual([]);
	});
});

describe('the engine parking a batch with one long value', () => {
	const letters = (workflowId: string) =>
		adminQuery<{ item_index: number; idempotency_key: string | null }>(
			`SELECT item_index, idempotency_key FROM "${schema}".dead_letters
			 WHERE workflow_id = $1 ORDER BY item_index`,
			[workflowId],
		);
	const request = (workflowId: string, itemIndex: number, idempotencyKey: string) => ({
		workflowId,
		step: 'Post Order',
		itemIndex,
		idempotencyKey,
		errorClass: 'permanent',
		payload: { itemIndex },
	});

	it.each([
		['Idempotency Key', { idempotencyKey: incompressible(3_000) }, /Idempotency Key is 3,000/],
		['Step', { step: incompressible(3_000) }, /Step is 3,000 characters long/],
		['Owner', { owner: incompressible(3_000) }, /Owner is 3,000 characters long/],
	])(
		'a long %s refuses its own item, naming its position and the field, and parks the others',
		async (field, long, message) => {
			const workflowId = `wf-engine-${field.replace(/ /g, '-')}`;
			const outcomes = await parkItems(store, [
				request(workflowId, 0, 'order-0'),
				{ ...request(workflowId, 1, 'order-1'), ...long },
				request(workflowId, 2, 'order-2'),
			]);
			expect(outcomes[1].refused?.message).toMatch(new RegExp(`^Item 1: ${message.source}`));
			expect(outcomes[1].refused?.itemIndex).toBe(1);
			expect([outcomes[0].refused, outcomes[2].refused]).toEqual([undefined, undefined]);
			expect(await letters(workflowId)).toEqual([
				{ item_index: 0, idempotency_key: 'order-0' },
				{ item_index: 2, idempotency_key: 'order-2' },
			]);
		},
	);

	it('a batch whose every item is refused stores nothing and says why for each', async () => {
		const outcomes = await parkItems(store, [
			{ ...request('wf-engine-none', 0, 'a'), step: '' },
			request('wf-engine-none', 1, incompressible(3_000)),
		]);
		expect(outcomes.map((o) => o.refused?.message)).toEqual([
			'Item 0 has no Step',
			expect.stringMatching(/^Item 1: Idempotency Key is 3,000 characters long/),
		]);
		expect(await letters('wf-engine-none')).toEqual([]);
	});
});

describe('a claim with one long Entity Key', () => {
	const versions = (consumer: string) =>
		adminQuery<{ entity_key: string; version: string }>(
			`SELECT entity_key, version::text FROM "${schema}".entity_versions
			 WHERE consumer = $1 ORDER BY entity_key`,
			[consumer],
		);

	it('is stored as its hash, the same entity every time, and its batch is claimed', async () => {
		const entity = incompressible(3_000);
		const items: INodeExecutionData[] = [
			{ json: { id: 'evt-1', entity: 'customer-1', version: 1 } },
			{ json: { id: 'evt-2', entity, version: 2 } },
		];
		const parameters = {
			operation: 'claim',
			consumer: 'long-entity',
			eventId: '={{ $json.id }}',
			checkOrder: true,
			entityKey: '={{ $json.entity }}',
			entityVersion: '={{ $json.version }}',
		};
		const [fresh] = await claim.call(nodeContext('Dedupe', parameters, items, false), store, items);
		expect(fresh.map((i) => i.json.id)).toEqual(['evt-1', 'evt-2']);
		const stored = await versions('long-entity');
		expect(stored).toHaveLength(2);
		expect(stored.map((r) => r.entity_key)).toContain('customer-1');
		expect(stored.find((r) => r.entity_key !== 'customer-1')).toEqual({
			entity_key: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
			version: '2',
		});

		// An older version of the same long entity, straight to the engine: stale against the hash.
		const [older] = await claimEvents(
			store,
			{
				consumer: 'long-entity',
				executionId: 'exec-long-engine',
				mode: ClaimMode.doneAtClaim,
				leaseSeconds: 60,
				retentionDays: 30,
			},
			[{ index: 0, eventId: 'evt-3', entityKey: entity, version: '1' }],
		);
		expect(older).toMatchObject({ outcome: 'stale', lastVersion: '2' });
	});

	it('with a control character is refused on its own item, naming it, and the others are claimed', async () => {
		const items: INodeExecutionData[] = [
			{ json: { id: 'evt-c1', entity: 'customer-1', version: 1 } },
			{ json: { id: 'evt-c2', entity: `customer\u0000${incompressible(3_000)}`, version: 1 } },
		];
		const parameters = {
			operation: 'claim',
			consumer: 'control-entity',
			eventId: '={{ $json.id }}',
			checkOrder: true,
			entityKey: '={{ $json.entity }}',
			entityVersion: '={{ $json.version }}',
		};
		const [fresh, , , invalid] = await claim.call(
			nodeContext('Dedupe', parameters, items, true),
			store,
			items,
		);
		expect(fresh.map((i) => i.json.id)).toEqual(['evt-c1']);
		expect(invalid.map((i) => [i.pairedItem, i.json.error])).toEqual([
			[{ item: 1 }, 'Item 1 has an entity key with a control character (U+0000) at position 8'],
		]);
		expect((await versions('control-entity')).map((r) => r.entity_key)).toEqual(['customer-1']);
	});
});
