import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readJson as readBody, sendJson as json } from '../../demo/http';

/**
 * A fault-injecting HTTP server that plays a real API, for every end-to-end test and benchmark.
 * POST/PUT/PATCH to a route commits an "effect" (a created record) and answers 201. Per route it
 * honours an Idempotency-Key (replaying its own saved response, one effect per key) or ignores
 * it. Each request can be scripted: any status with Retry-After, a delay, a connection reset
 * before committing, a commit followed by a dropped response, or a commit followed by an error
 * status (a gateway that gave up on an origin that committed). It reports what it committed.
 *
 * A versioned route plays one record with conditional writes: GET answers it with its ETag, a
 * PUT or PATCH carrying If-Match commits only when the ETag is still the current one (else 412
 * with the current version), and `change()` plays a person editing the record meanwhile.
 */
export type Step =
	| { status: number; retryAfter?: string; body?: unknown; delayMs?: number }
	| { reset: 'before' | 'after'; delayMs?: number }
	| { commitThen: number; delayMs?: number }
	| { delayMs: number };

export interface Effect {
	id: number;
	route: string;
	key: string | undefined;
	body: unknown;
	at: number;
}

export interface Received {
	route: string;
	method: string;
	key: string | undefined;
	body: unknown;
	headers: IncomingMessage['headers'];
	at: number;
}

export interface RouteOptions {
	honoursKey: boolean;
	/** Header the target reads the key from. */
	keyHeader?: string;
	/** Delay of every request, to play an API with real latency. */
	latencyMs?: number;
	/** The route is one record written with If-Match (see the class comment). */
	versioned?: boolean;
}

export interface VersionedRecord {
	version: number;
	value: unknown;
	writtenBy: string;
}

export class TestTarget {
	private server?: Server;
	private port = 0;
	private nextId = 1;
	private readonly routes = new Map<string, RouteOptions>();
	private readonly scripts = new Map<string, Step[]>();
	private readonly saved = new Map<string, { status: number; body: unknown }>();
	readonly effects: Effect[] = [];
	readonly received: Received[] = [];
	readonly records = new Map<string, VersionedRecord>();

	/** A person (or another system) changes a versioned route's record: a new version. */
	change(path: string, value: unknown, by = 'a person'): VersionedRecord {
		const current = this.records.get(path) ?? { version: 0, value: null, writtenBy: '' };
		const next = { version: current.version + 1, value, writtenBy: by };
		this.records.set(path, next);
		return next;
	}

	async start(): Promise<this> {
		this.server = createServer((request, response) => void this.handle(request, response));
		this.server.keepAliveTimeout = 1_000;
		await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
		this.port = (this.server.address() as AddressInfo).port;
		return this;
	}

	async stop(): Promise<void> {
		this.server?.closeAllConnections();
		await new Promise((resolve) => this.server?.close(resolve));
	}

	/** Declares a route (default: honours Idempotency-Key). */
	route(path: string, options: RouteOptions = { honoursKey: true }): string {
		this.routes.set(path, options);
		return this.url(path);
	}

	url(path: string): string {
		return `http://127.0.0.1:${this.port}${path}`;
	}

	/** The next requests to a route play these steps, in order; then the route commits normally. */
	script(path: string, ...steps: Step[]): void {
		this.scripts.set(path, [...(this.scripts.get(path) ?? []), ...steps]);
	}

	effectsOf(path: string, key?: string): Effect[] {
		return this.effects.filter((e) => e.route === path && (key === undefined || e.key === key));
	}

	requestsTo(path: string): Received[] {
		return this.received.filter((r) => r.route === path && r.method !== 'GET');
	}

	/** One record with conditional writes: If-Match must name the current version. */
	private versioned(
		route: string,
		request: IncomingMessage,
		response: ServerResponse,
		body: unknown,
	): void {
		const current = this.records.get(route) ?? { version: 0, value: null, writtenBy: '' };
		if (request.method === 'GET')
			return json(
				response,
				200,
				{ version: current.version, value: current.value },
				{ etag: etagOf(current) },
			);
		const ifMatch = headerText(request.headers['if-match']);
		if (ifMatch !== undefined && ifMatch !== etagOf(current))
			return json(
				response,
				412,
				{ message: 'precondition failed', version: current.version, value: current.value },
				{ etag: etagOf(current) },
			);
		const next = { version: current.version + 1, value: body, writtenBy: 'a write' };
		this.records.set(route, next);
		this.effects.push({
			id: this.nextId++,
			route,
			key: headerText(request.headers['idempotency-key']),
			body,
			at: Date.now(),
		});
		return json(
			response,
			200,
			{ version: next.version, value: next.value },
			{ etag: etagOf(next) },
		);
	}

	private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
		const body = await readBody(request);
		const url = new URL(request.url ?? '/', 'http://target');
		const route = url.pathname.replace(/\/by-key\/.*$/, '');
		const options = this.routes.get(route) ?? { honoursKey: true };
		const key = headerText(
			request.headers[(options.keyHeader ?? 'idempotency-key').toLowerCase()],
		)?.replace(/^"(.*)"$/, '$1');
		this.received.push({
			route,
			method: request.method ?? 'GET',
			key,
			body,
			headers: request.headers,
			at: Date.now(),
		});

		if (options.versioned && request.method === 'GET')
			return this.versioned(route, request, response, body);
		if (request.method === 'GET') {
			// Lookup for reconciliation: GET <route>/by-key/<key> finds the effect written with that key.
			const wanted = decodeURIComponent(url.pathname.split('/by-key/')[1] ?? '');
			const found = this.effects.find((e) => e.route === route && e.key === wanted);
			return json(response, found ? 200 : 404, found ?? { message: 'not found' });
		}
		if (options.latencyMs) await delay(options.latencyMs);
		const step = this.scripts.get(route)?.shift();
		if (step?.delayMs) await delay(step.delayMs);

		if (step && 'status' in step) {
			const headers: Record<string, string> = step.retryAfter
				? { 'retry-after': step.retryAfter }
				: {};
			return json(
				response,
				step.status,
				step.body ?? { message: `scripted ${step.status}` },
				headers,
			);
		}
		if (options.versioned) return this.versioned(route, request, response, body);

		if (step && 'reset' in step && step.reset === 'before') return void request.socket.destroy();

		// Commit, once per key when the route honours keys. From the check to the commit nothing
		// awaits, so two requests with one key cannot both commit.
		const savedKey = options.honoursKey && key ? `${route}\u0000${key}` : undefined;
		const replay = savedKey ? this.saved.get(savedKey) : undefined;
		if (replay) {
			if (step && 'reset' in step) return void request.socket.destroy();
			if (step && 'commitThen' in step)
				return json(response, step.commitThen, { message: `scripted ${step.commitThen}` });
			return json(response, replay.status, replay.body, { 'idempotent-replayed': 'true' });
		}
		const effect: Effect = { id: this.nextId++, route, key, body, at: Date.now() };
		this.effects.push(effect);
		const answer = {
			id: effect.id,
			...(body && typeof body === 'object' ? body : { value: body }),
		};
		if (savedKey) this.saved.set(savedKey, { status: 201, body: answer });
		if (step && 'reset' in step && step.reset === 'after') return void request.socket.destroy();
		if (step && 'commitThen' in step)
			return json(response, step.commitThen, { message: `scripted ${step.commitThen}` });
		return json(response, 201, answer, { location: `${route}/${effect.id}` });
	}
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const etagOf = (record: VersionedRecord): string => `"v${record.version}"`;

const headerText = (value: string | string[] | undefined): string | undefined =>
	Array.isArray(value) ? value[0] : value;
