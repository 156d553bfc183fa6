import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readJson, sendJson as send } from './http';
import type { AddressInfo } from 'node:net';

/**
 * The demo API of the worked example (lead routing under failure): an enrichment service, a
 * CRM and an alert sink in one local server, with faults that can be switched on.
 *
 *   POST /enrich            {email} -> {company, size}; faults "enrichTimeouts" (the next N) and
 *                           "enrichTimeoutRate" (a share, at random per request) hang past the caller's timeout
 *   POST /crm/contacts      upsert by email, honours Idempotency-Key; fault "rejectLocalPhones": 422 for numbers
 *                           without +country code; "crmUnavailable" (the next N) and "crmUnavailableRate" answer
 *                           503; "crmLostRate" commits (or replays), then drops the connection without an answer
 *   PUT  /crm/contacts/:id/owner  assigns the contact's owner, honours Idempotency-Key and If-Match (the
 *                           contact's version, as its ETag): a stale version is refused with 412 and the current
 *                           one; fault "ownerUnavailable" (the next N) answers 503
 *   GET  /crm/contacts      every contact (with its version and owner)
 *   GET  /crm/effects       the effect log: one entry per committed upsert, with its Idempotency-Key
 *   POST /alerts            records an alert (the Alert workflow's HTTP channel)
 *   GET  /alerts            every alert
 *   POST /chat              records a message to the team chat (a user's own error workflow)
 *   POST /_faults           {enrichTimeouts?, enrichDelayMs?, rejectLocalPhones?, crmUnavailable?, enrichTimeoutRate?,
 *                           crmUnavailableRate?, crmLostRate?, crmCrashTextRate?, echoSecrets?, rejectEmails?} switches faults; "echoSecrets" (a canary)
 *                           makes every answer carry it where secrets sit, and echo the request's credentials
 *   GET  /_stats            how many requests came in and how many faults were injected
 *   POST /_reset            forgets everything
 */
export interface Faults {
	enrichTimeouts: number;
	enrichDelayMs: number;
	rejectLocalPhones: boolean;
	/** The next N contact writes answer 503 (the CRM is down). */
	crmUnavailable: number;
	/** Share (0..1) of enrichment calls that hang for enrichDelayMs, drawn per request. */
	enrichTimeoutRate?: number;
	/** Share (0..1) of contact writes answered 503 before anything is done, drawn per request. */
	crmUnavailableRate?: number;
	/**
	 * Share (0..1) of contact writes whose answer is lost: the upsert is committed (or the saved
	 * answer of its key replayed), then the connection is destroyed, as a proxy timeout or a
	 * reset after commit would. The caller cannot know whether the write happened.
	 */
	crmLostRate?: number;
	/**
	 * A canary secret: when set, every answer carries it where careless APIs put secrets (a
	 * token in the enrichment result, a client secret in the contact, "Authorization: Bearer …"
	 * and "token=…" in error messages) and echoes the request's own Authorization and X-Api-Key
	 * headers, so a test can prove none of it is stored or sent on.
	 */
	echoSecrets?: string;
	/** The next N owner assignments answer 503. */
	ownerUnavailable?: number;
	/**
	 * Share (0..1) of contact writes answered 502 `{"error":"Upstream service crashed"}` before
	 * anything is done: an error whose text says "crash" and that is a failure, not a crash.
	 */
	crmCrashTextRate?: number;
	/**
	 * E-mail addresses the CRM refuses whatever else is fixed (422 "email: address refused"): a
	 * record that fails again when it is replayed, the poison of a Replay batch.
	 */
	rejectEmails?: string[];
}

/** One committed upsert at the CRM: what an auditor counts to find a business effect done twice. */
export interface CrmEffect {
	seq: number;
	/** The Idempotency-Key the write carried, if any. */
	key?: string;
	email: string;
	contactId: number;
	/** True when the upsert created the contact, false when it changed an existing one. */
	created: boolean;
	at: string;
}

/** Requests seen and faults injected, so a campaign can say what it put the workflow through. */
export interface DemoStats {
	enrichCalls: number;
	enrichTimeouts: number;
	crmWrites: number;
	crmUnavailable: number;
	crmRejected: number;
	crmReplayed: number;
	crmCommitted: number;
	crmLost: number;
	crmCrashText: number;
}

const noStats = (): DemoStats => ({
	enrichCalls: 0,
	enrichTimeouts: 0,
	crmWrites: 0,
	crmUnavailable: 0,
	crmRejected: 0,
	crmReplayed: 0,
	crmCommitted: 0,
	crmLost: 0,
	crmCrashText: 0,
});

export interface Contact {
	id: number;
	email: string;
	name?: string;
	phone?: string;
	company?: string;
	createdAt: string;
	updatedAt: string;
	writes: number;
	/** Goes up with every change, by a write or by a person; the contact's ETag is `"<version>"`. */
	version: number;
	owner?: string;
}

/** One change of a contact's owner at the CRM, by the routing workflow or by a person. */
export interface OwnerChange {
	key?: string;
	contactId: number;
	owner: string;
	by: 'routing' | 'a person';
	version: number;
}

export class DemoApi {
	private server?: Server;
	port = 0;
	faults: Faults = {
		enrichTimeouts: 0,
		enrichDelayMs: 30_000,
		rejectLocalPhones: true,
		crmUnavailable: 0,
	};
	contacts: Contact[] = [];
	alerts: unknown[] = [];
	/** Messages to the team chat: a user's own error workflow posts its failures there. */
	chat: unknown[] = [];
	/** When each alert arrived (ms since the epoch), in the order of `alerts`. */
	alertTimes: number[] = [];
	enrichCalls = 0;
	effects: CrmEffect[] = [];
	ownerChanges: OwnerChange[] = [];
	stats: DemoStats = noStats();
	private readonly savedByKey = new Map<string, { status: number; body: unknown }>();
	private nextId = 1;

	/** `random` draws the per-request faults (a seeded generator makes a run repeatable). */
	constructor(private readonly random: () => number = Math.random) {}

	async start(port = 0): Promise<this> {
		this.server = createServer((request, response) => void this.handle(request, response));
		await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
		this.port = (this.server.address() as AddressInfo).port;
		return this;
	}

	async stop(): Promise<void> {
		this.server?.closeAllConnections();
		await new Promise((resolve) => this.server?.close(resolve));
	}

	get url(): string {
		return `http://127.0.0.1:${this.port}`;
	}

	reset(): void {
		this.contacts = [];
		this.alerts = [];
		this.chat = [];
		this.alertTimes = [];
		this.enrichCalls = 0;
		this.effects = [];
		this.ownerChanges = [];
		this.stats = noStats();
		this.savedByKey.clear();
		this.faults = {
			enrichTimeouts: 0,
			enrichDelayMs: 30_000,
			rejectLocalPhones: true,
			crmUnavailable: 0,
		};
	}

	private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
		const parsed = await readJson(request);
		const body =
			parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : null;
		const path = new URL(request.url ?? '/', 'http://demo').pathname;
		const route = `${request.method} ${path}`;
		if (route === 'POST /_faults') {
			this.faults = { ...this.faults, ...(body as Partial<Faults>) };
			return send(response, 200, this.faults);
		}
		if (route === 'GET /_stats') return send(response, 200, this.stats);
		if (route === 'POST /_reset') {
			this.reset();
			return send(response, 200, { reset: true });
		}
		if (route === 'POST /enrich') {
			this.enrichCalls++;
			this.stats.enrichCalls++;
			const hang = this.faults.enrichTimeouts > 0 || this.draw(this.faults.enrichTimeoutRate);
			if (hang) {
				if (this.faults.enrichTimeouts > 0) this.faults.enrichTimeouts--;
				this.stats.enrichTimeouts++;
				await new Promise((r) => setTimeout(r, this.faults.enrichDelayMs));
			}
			const email = String(body?.email ?? '');
			const domain = email.split('@')[1] ?? 'unknown';
			return send(response, 200, {
				email,
				company: domain.split('.')[0].replace(/^./, (c) => c.toUpperCase()),
				size: 50,
				...this.secretsFor(request, 'token'),
			});
		}
		// ?email= narrows either list to one address (a fire drill's Verify request).
		const email = new URL(request.url ?? '/', 'http://demo').searchParams.get('email');
		const ofEmail = <T extends { email: string }>(list: T[]): T[] =>
			email === null ? list : list.filter((entry) => entry.email === email.trim().toLowerCase());
		if (route === 'GET /crm/contacts') return send(response, 200, ofEmail(this.contacts));
		if (route === 'GET /crm/effects') return send(response, 200, ofEmail(this.effects));
		if (route === 'POST /crm/contacts') return this.upsertContact(request, response, body ?? {});
		const owner = /^PUT \/crm\/contacts\/(\d+)\/owner$/.exec(route);
		if (owner) return this.assignOwner(request, response, Number(owner[1]), body ?? {});
		if (route === 'POST /alerts') {
			this.alerts.push(body);
			this.alertTimes.push(Date.now());
			return send(response, 201, { received: this.alerts.length });
		}
		if (route === 'GET /alerts') return send(response, 200, this.alerts);
		if (route === 'POST /chat') {
			this.chat.push(body);
			return send(response, 201, { received: this.chat.length });
		}
		return send(response, 404, { message: `no route ${route}` });
	}

	/** With echoSecrets on: the canary under a secret name, and the request's credentials echoed. */
	private secretsFor(request: IncomingMessage, name: string): Record<string, unknown> {
		const canary = this.faults.echoSecrets;
		if (!canary) return {};
		return {
			[name]: canary,
			echo: {
				authorization: request.headers.authorization ?? null,
				'x-api-key': request.headers['x-api-key'] ?? null,
			},
		};
	}

	/** With echoSecrets on: an error message that quotes a credential, as careless APIs do. */
	private secretMessage(message: string): string {
		const canary = this.faults.echoSecrets;
		return canary
			? `${message} (request had Authorization: Bearer ${canary}; retry with token=${canary})`
			: message;
	}

	/** True with probability `rate` (none when the rate is unset or 0). */
	private draw(rate: number | undefined): boolean {
		return rate !== undefined && rate > 0 && this.random() < rate;
	}

	/**
	 * Upsert by email; a repeated Idempotency-Key gets the saved answer and writes nothing. Every
	 * committed write is appended to the effect log. From the key check to the commit nothing
	 * awaits, so two requests with one key cannot both commit.
	 */
	private upsertContact(
		request: IncomingMessage,
		response: ServerResponse,
		body: Record<string, unknown>,
	): void {
		const key = request.headers['idempotency-key'] as string | undefined;
		this.stats.crmWrites++;
		const unavailable = this.faults.crmUnavailable > 0 || this.draw(this.faults.crmUnavailableRate);
		if (unavailable) {
			if (this.faults.crmUnavailable > 0) this.faults.crmUnavailable--;
			this.stats.crmUnavailable++;
			return send(response, 503, {
				message: this.secretMessage('CRM maintenance, try again later'),
				...this.secretsFor(request, 'session_token'),
			});
		}
		if (this.draw(this.faults.crmCrashTextRate)) {
			this.stats.crmCrashText++;
			return send(response, 502, { error: 'Upstream service crashed' });
		}
		// Decided before the work: the answer of this request will not reach the caller.
		const lose = this.draw(this.faults.crmLostRate);
		const answerOrDrop = (
			status: number,
			answer: unknown,
			headers: Record<string, string> = {},
		): void => {
			if (lose) {
				this.stats.crmLost++;
				return void request.socket.destroy();
			}
			return send(response, status, answer, headers);
		};
		const saved = key ? this.savedByKey.get(key) : undefined;
		if (saved) {
			this.stats.crmReplayed++;
			return answerOrDrop(saved.status, saved.body, { 'idempotent-replayed': 'true' });
		}
		const email = String(body.email ?? '')
			.trim()
			.toLowerCase();
		if (!email) {
			this.stats.crmRejected++;
			return send(response, 422, {
				message: this.secretMessage('email: required'),
				...this.secretsFor(request, 'api_key'),
			});
		}
		if (this.faults.rejectEmails?.includes(String(email))) {
			this.stats.crmRejected++;
			return send(response, 422, { message: 'email: address refused' });
		}
		const phone = body.phone === undefined ? undefined : String(body.phone);
		if (phone && this.faults.rejectLocalPhones && !phone.startsWith('+')) {
			this.stats.crmRejected++;
			return send(response, 422, {
				message: this.secretMessage(
					`phone: invalid format "${phone}", expected +<country code><number>`,
				),
				...this.secretsFor(request, 'api_key'),
			});
		}
		const now = new Date().toISOString();
		let contact = this.contacts.find((c) => c.email === email);
		const created = !contact;
		if (contact)
			Object.assign(contact, {
				name: body.name ?? contact.name,
				phone: phone ?? contact.phone,
				company: body.company ?? contact.company,
				updatedAt: now,
				writes: contact.writes + 1,
				version: contact.version + 1,
			});
		else {
			contact = {
				id: this.nextId++,
				email,
				name: body.name as string | undefined,
				phone,
				company: body.company as string | undefined,
				createdAt: now,
				updatedAt: now,
				writes: 1,
				version: 1,
			};
			this.contacts.push(contact);
		}
		this.stats.crmCommitted++;
		this.effects.push({
			seq: this.effects.length + 1,
			key,
			email,
			contactId: contact.id,
			created,
			at: now,
		});
		const answer = {
			status: 201,
			body: { ...contact, ...this.secretsFor(request, 'client_secret') },
		};
		if (key) this.savedByKey.set(key, answer);
		return answerOrDrop(answer.status, answer.body);
	}

	/** A person changes a contact's owner in the CRM: a newer decision than any write in flight. */
	reassign(email: string, owner: string): Contact {
		const contact = this.contacts.find((c) => c.email === email);
		if (!contact) throw new Error(`no contact ${email}`);
		contact.owner = owner;
		contact.version++;
		contact.updatedAt = new Date().toISOString();
		this.ownerChanges.push({
			contactId: contact.id,
			owner,
			by: 'a person',
			version: contact.version,
		});
		return contact;
	}

	/**
	 * Assigns a contact's owner. A repeated Idempotency-Key gets the saved answer; an If-Match
	 * naming another version than the contact's is refused with 412 and the current version, so a
	 * write built on an old read never overwrites a newer change.
	 */
	private assignOwner(
		request: IncomingMessage,
		response: ServerResponse,
		id: number,
		body: Record<string, unknown>,
	): void {
		const key = request.headers['idempotency-key'] as string | undefined;
		if ((this.faults.ownerUnavailable ?? 0) > 0) {
			this.faults.ownerUnavailable!--;
			return send(response, 503, {
				message: this.secretMessage('CRM maintenance, try again later'),
			});
		}
		const saved = key ? this.savedByKey.get(key) : undefined;
		if (saved) return send(response, saved.status, saved.body, { 'idempotent-replayed': 'true' });
		const contact = this.contacts.find((c) => c.id === id);
		if (!contact) return send(response, 404, { message: `no contact ${id}` });
		const etag = `"${contact.version}"`;
		const expected = request.headers['if-match'];
		if (
			expected !== undefined &&
			expected.replace(/^W\//, '').replace(/"/g, '') !== String(contact.version)
		)
			return send(
				response,
				412,
				{
					message: `contact ${id} changed since version ${expected}: it is at version ${contact.version}, owner ${contact.owner ?? 'none'}`,
					version: contact.version,
					owner: contact.owner ?? null,
				},
				{ etag },
			);
		const owner = String(body.owner ?? '');
		if (!owner) return send(response, 422, { message: 'owner: required' });
		contact.owner = owner;
		contact.version++;
		contact.updatedAt = new Date().toISOString();
		this.ownerChanges.push({ key, contactId: id, owner, by: 'routing', version: contact.version });
		const answer = { status: 200, body: { ...contact } };
		if (key) this.savedByKey.set(key, answer);
		return send(response, answer.status, answer.body, { etag: `"${contact.version}"` });
	}
}
