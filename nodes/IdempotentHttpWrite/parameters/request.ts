import type { INodeProperties } from 'n8n-workflow';
import { LIMITS } from '../../../lib';
import { range } from '../../shared/range';

/** The request, as n8n's HTTP Request node asks for it: method, URL, authentication, query, headers, body, timeout. */
export const requestProperties: INodeProperties[] = [
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
		// A Webhook's item is its headers, query and body: the default sends the body alone, so a
		// caller's Authorization header never travels on to the target.
		default: '={{ $json.body }}',
		description:
			"The body. The default is a Webhook item's body (never its headers); after other nodes, set what the target should receive (the whole item, or fields of it). Part of the request fingerprint, so the same key must always carry the same body.",
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
		typeOptions: range(LIMITS.timeoutMs),
		default: 10_000,
		description:
			'How long to wait for an answer; a timeout after the request was sent is an unknown outcome',
	},
];
