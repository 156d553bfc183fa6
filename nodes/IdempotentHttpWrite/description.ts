import type { INodeProperties } from 'n8n-workflow';
import { keyProperties } from './parameters/key';
import { outcomesProperties } from './parameters/outcomes';
import { requestProperties } from './parameters/request';
import { retriesProperties } from './parameters/retries';

/**
 * The HTTP Request node's request options for writes, plus the idempotency key, the retry
 * policy, what to do with unknown outcomes and with failures. Outputs: Success and Failed.
 */
export const properties: INodeProperties[] = [
	...requestProperties,
	...keyProperties,
	...retriesProperties,
	...outcomesProperties,
];
