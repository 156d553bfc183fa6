import type { IDataObject } from 'n8n-workflow';

/**
 * Items from an n8n error output (or continue-on-fail) carry the original item plus `error`:
 * an object with message, description and httpCode, or just a message. This splits the two so
 * the payload is stored untouched and the error fills the record.
 */
export interface FailedItem {
	payload: IDataObject;
	message?: string;
	status?: number;
}

export function splitErrorItem(json: IDataObject): FailedItem {
	if (!('error' in json)) return { payload: json };
	const { error, ...payload } = json;
	if (typeof error === 'string') return { payload, message: error };
	if (error && typeof error === 'object') {
		const e = error as IDataObject;
		const message =
			[e.message, e.description].filter((part) => typeof part === 'string' && part).join(': ') ||
			undefined;
		const rawStatus =
			e.httpCode ?? e.status ?? e.statusCode ?? (e.context as IDataObject | undefined)?.httpCode;
		const status = Number(rawStatus);
		return {
			payload,
			message: message ?? JSON.stringify(e),
			status: Number.isInteger(status) && status >= 100 && status < 600 ? status : undefined,
		};
	}
	return { payload };
}

/** 4xx is permanent, 408/425/429/5xx an exhausted transient, anything else a failed execution step. */
export function classifyStatus(status: number | undefined): string {
	if (status === undefined) return 'execution';
	if ([408, 425, 429].includes(status) || status >= 500) return 'exhausted';
	if (status >= 400) return 'permanent';
	return 'execution';
}
