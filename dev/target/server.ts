import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readJson as readBody, sendJson as json } from '../../demo/http';

/**
 * A fault-injecting HTTP server that plays a real API, for every end-to-end test and benchmark.
 * POST/PUT/PATCH to a route commits an "effect" (a created record) and answers 201. Per route it
 * honours an Idempotency-Key (replaying its own saved response, one effect per key) or ignores
 * it. Each request can be scripted: any status with Retry-After, a delay, a connection reset
 * before committing, or a commit followed by a dropped response. It reports what it committed.
 */
export type Step =
	| { status: number; retryAfter?: string; body?: unknown; delayMs?: number }
	| { reset: 'before' | 'after'; delayMs?: number }
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
		if (step && 'reset' in step && step.reset === 'before') return void request.socket.destroy();

		// Commit, once per key when the route honours keys. From the check to the commit nothing
		// awaits, so two requests with one key cannot both commit.
		const savedKey = options.honoursKey && key ? `${route}\u0000${key}` : undefined;
		const replay = savedKey ? this.saved.get(savedKey) : undefined;
		if (replay) {
			if (step && 'reset' in step) return void request.socket.destroy();
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
		return json(response, 201, answer, { location: `${route}/${effect.id}` });
	}
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const headerText = (value: string | string[] | undefined): string | undefined =>
	Array.isArray(value) ? value[0] : value;
