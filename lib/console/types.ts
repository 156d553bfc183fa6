import type { Store } from '../store';
import type { Html } from './html';
import type { Teams } from './permissions';

/** What a console request brings and what it answers, and what every page is drawn with. */
export interface ConsoleRequest {
	/** What n8n's Webhook node outputs: headers, query and (parsed) body. */
	headers?: Record<string, unknown>;
	query?: Record<string, unknown>;
	body?: unknown;
}

export interface ConsoleOptions {
	/** A header set by a signing-in proxy (e.g. x-forwarded-user); else the Basic auth user name. */
	operatorHeader?: string;
	title?: string;
	/** How many days the stats page charts. */
	days?: number;
	/** The largest number of records one batch replay changes. */
	batchLimit?: number;
	/** n8n's base URL, for links to executions (the find-an-item page). */
	baseUrl?: string;
	/**
	 * Operator → teams (JSON text or parsed): who may act on which owner's items
	 * (./permissions.ts). Empty: every signed-in operator may act on every item.
	 */
	teams?: Teams | string;
}

export interface ConsoleResponse {
	statusCode: number;
	contentType: string;
	body: string;
	/** Headers for every response: no framing, no sniffing, no caching, no referrer elsewhere. */
	headers: Record<string, string>;
	/** Records moved to replay_requested by this request: the workflow runs the Replay workflow when > 0. */
	replayRequested: number;
	operator: string | null;
	action: string | null;
	/** Where a successful action redirects (303, so a reload does not post it again); '' otherwise. */
	location: string;
}

export interface Flash {
	kind: 'ok' | 'error';
	text: string;
}

export interface PageContext {
	store: Store;
	request: ConsoleRequest;
	options: ConsoleOptions;
	operator: string | null;
	token: string;
	flash?: Flash;
}

export interface Page {
	html: Html;
	notFound?: boolean;
}
