import { hasExpression, jsonPathOf } from '../../nodes/shared/itemValues';

describe('per-item parameters read straight from the item', () => {
	it.each([
		['={{ $json.id }}', ['id']],
		['={{$json.body.id}}', ['body', 'id']],
		['={{ $json["event-id"] }}', ['event-id']],
		["={{ $json['data'].object.id }}", ['data', 'object', 'id']],
		['={{ $json.items[0].id }}', ['items', '0', 'id']],
		['={{ $json }}', []],
	])('%s reads the path %j', (raw, path) => {
		expect(jsonPathOf(raw)).toEqual(path);
	});

	it.each([
		'={{ $json.id + 1 }}',
		'={{ $("Webhook").item.json.id }}',
		'={{ $json.id.toString() }}',
		'plain-text',
		'={{ $jsonx }}',
		42,
		undefined,
	])("leaves %j to n8n's expression engine", (raw) => {
		expect(jsonPathOf(raw)).toBeUndefined();
	});
});

describe('parameters without expressions', () => {
	it.each([
		['plain', false],
		['={{ $json.id }}', true],
		[{ owner: 'sales-ops', impact: '=lead {{ $json.id }} not in CRM' }, true],
		[{ owner: 'sales-ops', retentionDays: 90 }, false],
		[[{ path: 'a' }, { path: '={{ 1 }}' }], true],
		[42, false],
	])('%j has an expression: %s', (raw, expected) => {
		expect(hasExpression(raw)).toBe(expected);
	});
});
