import type { INodeProperties } from 'n8n-workflow';

/**
 * The HTTP Request node's request options for writes, plus the idempotency key, the retry
 * policy, what to do with unknown outcomes and with failures. Outputs: Success and Failed.
 */
export const properties: INodeProperties[] = [
	{
		displayName: 'Method',
		name: 'method',
		type: 'options',
		options: [
			{ name: 'DELETE', value: 'DELETE' },
			{ name: 'PATCH', value: 'PATCH' },
			{ name: 'POST', value: 'POST' },
			{ name: 'PUT', value: 'PUT' },
		],
		default: 'POST',
	},
	{
		displayName: 'URL',
		name: 'url',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'https://api.example.com/contacts',
	},
	{
		displayName: 'Authentication',
		name: 'authentication',
		type: 'options',
		options: [
			{ name: 'Basic Auth', value: 'httpBasicAuth' },
			{ name: 'Bearer Auth', value: 'httpBearerAuth' },
			{ name: 'Header Auth', value: 'httpHeaderAuth' },
			{ name: 'None', value: 'none' },
			{ name: 'OAuth2', value: 'oAuth2Api' },
			{ name: 'Query Auth', value: 'httpQueryAuth' },
		],
		default: 'none',
		description:
			"N8n's generic credential types; n8n lets only its own HTTP Request node use every predefined type",
	},
	{
		displayName: 'Send Query Parameters',
		name: 'sendQuery',
		type: 'boolean',
		default: false,
	},
	{
		displayName: 'Query Parameters',
		name: 'queryParameters',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true },
		placeholder: 'Add Parameter',
		default: {},
		displayOptions: { show: { sendQuery: [true] } },
		options: [
			{
				displayName: 'Parameter',
				name: 'parameter',
				values: [
					{ displayName: 'Name', name: 'name', type: 'string', default: '' },
					{ displayName: 'Value', name: 'value', type: 'string', default: '' },
				],
			},
		],
	},
	{
		displayName: 'Send Headers',
		name: 'sendHeaders',
		type: 'boolean',
		default: false,
	},
	{
		displayName: 'Header Parameters',
		name: 'headerParameters',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true },
		placeholder: 'Add Header',
		default: {},
		displayOptions: { show: { sendHeaders: [true] } },
		options: [
			{
				displayName: 'Header',
				name: 'parameter',
				values: [
					{ displayName: 'Name', name: 'name', type: 'string', default: '' },
					{ displayName: 'Value', name: 'value', type: 'string', default: '' },
				],
			},
		],
	},
	{
		displayName: 'Send Body',
		name: 'sendBody',
		type: 'boolean',
		default: true,
	},
	{
		displayName: 'Body Content Type',
		name: 'contentType',
		type: 'options',
		options: [
			{ name: 'Form Urlencoded', value: 'form-urlencoded' },
			{ name: 'JSON', value: 'json' },
			{ name: 'Raw', value: 'raw' },
		],
		default: 'json',
		displayOptions: { show: { sendBody: [true] } },
	},
	{
		displayName: 'JSON',
		name: 'jsonBody',
		type: 'json',
		default: '={{ $json }}',
		description:
			'The body; part of the request fingerprint, so the same key must always carry the same body',
		displayOptions: { show: { sendBody: [true], contentType: ['json'] } },
	},
	{
		displayName: 'Body Parameters',
		name: 'bodyParameters',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true },
		placeholder: 'Add Parameter',
		default: {},
		displayOptions: { show: { sendBody: [true], contentType: ['form-urlencoded'] } },
		options: [
			{
				displayName: 'Parameter',
				name: 'parameter',
				values: [
					{ displayName: 'Name', name: 'name', type: 'string', default: '' },
					{ displayName: 'Value', name: 'value', type: 'string', default: '' },
				],
			},
		],
	},
	{
		displayName: 'Raw Content Type',
		name: 'rawContentType',
		type: 'string',
		default: 'text/plain',
		displayOptions: { show: { sendBody: [true], contentType: ['raw'] } },
	},
	{
		displayName: 'Body',
		name: 'rawBody',
		type: 'string',
		default: '',
		displayOptions: { show: { sendBody: [true], contentType: ['raw'] } },
	},
	{
		displayName: 'Timeout (Ms)',
		name: 'timeout',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: 3600000, numberPrecision: 0 },
		default: 10_000,
		description:
			'How long to wait for an answer; a timeout after the request was sent is an unknown outcome',
	},

	// Idempotency
	{
		displayName: 'Integration',
		name: 'integration',
		type: 'string',
		default: '',
		placeholder: 'e.g. crm',
		description:
			'The system this writes to. Keys are unique per integration by default; pausing it (Reliability Control) holds the writes.',
	},
	{
		displayName: 'Key Mode',
		name: 'keyMode',
		type: 'options',
		options: [
			{
				name: 'Business Identity',
				value: 'business',
				description: 'A hash of source, record, action and version',
			},
			{
				name: 'Custom',
				value: 'custom',
				description: 'Any expression that is the same on every retry and replay',
			},
		],
		default: 'business',
	},
	{
		displayName: 'Source System',
		name: 'keySource',
		type: 'string',
		default: '',
		placeholder: 'e.g. webform',
		displayOptions: { show: { keyMode: ['business'] } },
	},
	{
		displayName: 'Record ID',
		name: 'keyRecordId',
		type: 'string',
		default: '={{ $json.id }}',
		displayOptions: { show: { keyMode: ['business'] } },
	},
	{
		displayName: 'Action',
		name: 'keyAction',
		type: 'string',
		default: '',
		placeholder: 'e.g. create-contact',
		displayOptions: { show: { keyMode: ['business'] } },
	},
	{
		displayName: 'Record Version',
		name: 'keyVersion',
		type: 'string',
		default: '1',
		description: 'The version or updated-at of the record, so a later change is a new operation',
		displayOptions: { show: { keyMode: ['business'] } },
	},
	{
		displayName: 'Key',
		name: 'customKey',
		type: 'string',
		default: '',
		placeholder: "e.g. {{ 'invoice:' + $json.number + ':post' }}",
		description:
			'Never the execution ID, the item index, a time or a random value: a retry must produce the same key',
		displayOptions: { show: { keyMode: ['custom'] } },
	},
	{
		displayName: 'Idempotency Options',
		name: 'idempotency',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			{
				displayName: 'Header Name',
				name: 'headerName',
				type: 'string',
				default: 'Idempotency-Key',
			},
			{
				displayName: 'Header Value',
				name: 'quoting',
				type: 'options',
				options: [
					{ name: 'Plain (Stripe)', value: 'plain' },
					{ name: 'Quoted String (IETF Draft)', value: 'quoted' },
				],
				default: 'plain',
			},
			{
				displayName: 'Item Reference',
				name: 'itemReference',
				type: 'string',
				default: '',
				placeholder: 'e.g. {{ $json.orderId }}',
				description:
					"What the writes of one business item share, so a later step that parks the item lists this step (and its compensation) in the dead letter. Empty: this execution's item index.",
			},
			{
				displayName: 'Mask Fields',
				name: 'maskFields',
				type: 'string',
				default: '',
				placeholder: 'e.g. iban, birthDate',
				description:
					'Field names masked in everything the write keeps or passes on (saved responses, errors, parked items), besides the usual secret names',
			},
			{
				displayName: 'Retention (Days)',
				name: 'retentionDays',
				type: 'number',
				typeOptions: { minValue: 1, maxValue: 3650, numberPrecision: 0 },
				default: 30,
				description:
					'How long a settled key is remembered (at least a day): longer than any sender retries or replays. A key in progress or with an unknown outcome is never forgotten.',
			},
			{
				displayName: 'Saved Body Limit (KB)',
				name: 'maxSavedBodyKb',
				type: 'number',
				typeOptions: { minValue: 0, maxValue: 10240, numberPrecision: 0 },
				default: 64,
				description: 'Largest response body saved for replays',
			},
			{
				displayName: 'Scope',
				name: 'scope',
				type: 'string',
				default: '',
				description:
					'Keys are unique per scope; empty means the integration (or this workflow and node when there is none)',
			},
			{
				displayName: 'Send Key to Target',
				name: 'sendKey',
				type: 'boolean',
				default: true,
				description:
					'Whether to send the key as a header; turn off for targets that reject unknown headers',
			},
		],
	},

	// Retries
	{
		displayName: 'Retries',
		name: 'retries',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			{
				displayName: 'Base Delay (Seconds)',
				name: 'baseDelaySeconds',
				type: 'number',
				typeOptions: { minValue: 0, maxValue: 3600 },
				default: 2,
			},
			{
				displayName: 'Circuit Breaker Cool-Down (Seconds)',
				name: 'breakerCoolDownSeconds',
				type: 'number',
				typeOptions: { minValue: 1, maxValue: 86400, numberPrecision: 0 },
				default: 60,
			},
			{
				displayName: 'Circuit Breaker Threshold',
				name: 'breakerThreshold',
				type: 'number',
				typeOptions: { minValue: 0, maxValue: 10000, numberPrecision: 0 },
				default: 0,
				description:
					'Consecutive transient failures of the integration that open its breaker; while open, items are held. 0 turns it off.',
			},
			{
				displayName: 'Concurrency',
				name: 'concurrency',
				type: 'number',
				typeOptions: { minValue: 1, maxValue: 1000, numberPrecision: 0 },
				default: 5,
				description: 'Items of a run written at once',
			},
			{
				displayName: 'Conflict On',
				name: 'conflictOn',
				type: 'string',
				default: '412',
				description:
					'Statuses that mean the target refused the precondition (its record changed since): parked as a conflict for a person, never retried. Add 409 for targets that answer a stale write with it.',
			},
			{
				displayName: 'Deadline (Seconds)',
				name: 'deadlineSeconds',
				type: 'number',
				typeOptions: { minValue: 1, maxValue: 86400 },
				default: 120,
				description: 'Budget for each item, retries included; then it is parked',
			},
			{
				displayName: 'Honour Retry-After',
				name: 'honourRetryAfter',
				type: 'boolean',
				default: true,
			},
			{
				displayName: 'Max Attempts',
				name: 'maxAttempts',
				type: 'number',
				typeOptions: { minValue: 1, maxValue: 100, numberPrecision: 0 },
				default: 5,
			},
			{
				displayName: 'Max Delay (Seconds)',
				name: 'maxDelaySeconds',
				type: 'number',
				typeOptions: { minValue: 0, maxValue: 86400 },
				default: 60,
			},
			{
				displayName: 'Never Retry On',
				name: 'neverRetry',
				type: 'string',
				default: '400,401,403,404,409,422',
				description: 'Statuses that are permanent failures',
			},
			{
				displayName: 'Retry On',
				name: 'retryOn',
				type: 'string',
				default: '408,425,429,500,502,503,504',
				description: 'Statuses that are transient failures',
			},
		],
	},

	{
		displayName: 'Precondition',
		name: 'precondition',
		type: 'options',
		options: [
			{ name: 'None', value: 'none' },
			{
				name: 'If-Match',
				value: 'ifMatch',
				description:
					'Send the ETag (or version) the write was built on; the target refuses it with 412 if the record changed',
			},
			{
				name: 'If-Unmodified-Since',
				value: 'ifUnmodifiedSince',
				description: 'Send the last-modified time the write was built on',
			},
			{
				name: 'Custom Header',
				value: 'header',
				description: 'A header of your own carrying the expected version',
			},
		],
		default: 'none',
		description:
			'A conditional write: the target changes the record only if it still holds the version this write expects, so an old retry never overwrites a newer decision',
	},
	{
		displayName: 'Expected Version',
		name: 'preconditionValue',
		type: 'string',
		default: '',
		placeholder: 'e.g. {{ $json.etag }}',
		description: 'The ETag, version or last-modified time the write was built on',
		displayOptions: { hide: { precondition: ['none'] } },
	},
	{
		displayName: 'Version Header',
		name: 'preconditionHeader',
		type: 'string',
		default: '',
		placeholder: 'e.g. X-Expected-Version',
		displayOptions: { show: { precondition: ['header'] } },
	},
	{
		displayName: 'On Unknown Outcome',
		name: 'onUnknown',
		type: 'options',
		options: [
			{
				name: 'Automatic',
				value: 'auto',
				description: 'Retry with the same key when the key is sent, else park for review',
			},
			{ name: 'Park for Review', value: 'park' },
			{
				name: 'Reconcile by Lookup',
				value: 'lookup',
				description:
					'Ask the target whether the effect exists (GET the lookup URL: 2xx exists, 404 absent, else conflict)',
			},
			{
				name: 'Retry With the Same Key',
				value: 'retry',
				description: 'Safe when the target honours idempotency keys',
			},
		],
		default: 'auto',
		description: 'A lost response or an expired lease means the effect may or may not exist',
	},
	{
		displayName: 'Lookup URL',
		name: 'lookupUrl',
		type: 'string',
		default: '',
		placeholder: 'e.g. https://api.example.com/contacts?externalId={{ $json.ID }}',
		displayOptions: { show: { onUnknown: ['lookup'] } },
	},
	{
		displayName: 'On Failure',
		name: 'onFailure',
		type: 'options',
		options: [
			{ name: 'Park and Route to Failed', value: 'parkAndRoute' },
			{
				name: 'Park and Fail the Execution',
				value: 'parkAndFail',
				description: "So n8n's error workflow runs",
			},
			{ name: 'Route to Failed Only', value: 'route' },
		],
		default: 'parkAndRoute',
	},
	{
		displayName: 'Park Options',
		name: 'parkOptions',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: { show: { onFailure: ['parkAndRoute', 'parkAndFail'] } },
		options: [
			{
				displayName: 'Already Happened',
				name: 'alreadyHappened',
				type: 'string',
				default: '',
				placeholder: 'e.g. enriched, not in CRM',
			},
			{
				displayName: 'Business Impact',
				name: 'impact',
				type: 'string',
				default: '',
				placeholder: 'e.g. lead not in CRM',
			},
			{ displayName: 'Owner', name: 'owner', type: 'string', default: '' },
		],
	},
	{
		displayName: 'Compensation',
		name: 'compensation',
		type: 'options',
		options: [
			{ name: 'None', value: 'none' },
			{
				name: 'Request',
				value: 'request',
				description: "A request that reverses this step, filled in from the step's saved response",
			},
			{
				name: 'Manual Repair Plan',
				value: 'manual',
				description: 'What a person does to reverse this step, shown as a checklist',
			},
		],
		default: 'none',
		description:
			"How Dead Letter Park's Compensate reverses this step when a later step of the same item is parked",
	},
	{
		displayName: 'Compensation Method',
		name: 'compensationMethod',
		type: 'options',
		options: [
			{ name: 'DELETE', value: 'DELETE' },
			{ name: 'PATCH', value: 'PATCH' },
			{ name: 'POST', value: 'POST' },
			{ name: 'PUT', value: 'PUT' },
		],
		default: 'DELETE',
		displayOptions: { show: { compensation: ['request'] } },
	},
	{
		displayName: 'Compensation URL',
		name: 'compensationUrl',
		type: 'string',
		default: '',
		placeholder: 'e.g. https://crm.example.com/contacts/{{ $json.contactKey }}',
		description:
			"A placeholder in double curly braces names a value of this step's saved response body; it is filled in when Compensate runs, not when this node runs",
		displayOptions: { show: { compensation: ['request'] } },
	},
	{
		displayName: 'Compensation Body',
		name: 'compensationBody',
		type: 'string',
		typeOptions: { rows: 3 },
		default: '',
		placeholder: 'e.g. {"status": "cancelled", "contact": "{{ $json.contactKey }}"}',
		description:
			"JSON (or text) sent with the compensating request; placeholders name values of this step's saved response body",
		displayOptions: { show: { compensation: ['request'] } },
	},
	{
		displayName: 'Repair Plan',
		name: 'compensationPlan',
		type: 'string',
		typeOptions: { rows: 2 },
		default: '',
		placeholder: 'e.g. Refund the payment in the Stripe dashboard',
		displayOptions: { show: { compensation: ['manual'] } },
	},
	{
		displayName: 'Response',
		name: 'responseFormat',
		type: 'options',
		options: [
			{ name: 'Body', value: 'body' },
			{ name: 'Full Response', value: 'full', description: 'Status code, headers and body' },
			{
				name: 'Input Item With Response',
				value: 'inputAndResponse',
				description: 'The input item, with the response body under "response"',
			},
		],
		default: 'body',
	},
];
