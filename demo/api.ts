import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readJson, sendJson as send } from './http';
import type { AddressInfo } from 'node:net';

/**
 * The demo API of the worked example (lead routing under failure): an enrichment service, a
 * CRM and an alert sink in one local server, with faults that can be switched on.
 *
 *   POST /enrich            {email} -> {company, size}; fault "enrichTimeouts": N answers hang past the caller's timeout
 *   POST /crm/contacts      upsert by email, honours Idempotency-Key; fault "rejectLocalPhones": 422 for numbers without +country code
 *   GET  /crm/contacts      every contact
 *   POST /alerts            records an alert (the Alert workflow's HTTP channel)
 *   GET  /alerts            every alert
 *   POST /_faults           {enrichTimeouts?, enrichDelayMs?, rejectLocalPhones?, crmUnavailable?} switches faults
 *   POST /_reset            forgets everything
 */
export interface Faults {
	enrichTimeouts: number;
	enrichDelayMs: number;
	rejectLocalPhones: boolean;
	/** The next N contact writes answer 503 (the CRM is down). */
	crmUnavailable: number;
}

export interface Contact {
	id: number;
	email: string;
	name?: string;
	phone?: string;
	company?: string;
	createdAt: string;
	updatedAt: string;
	writes: number;
}

export class DemoApi {
	private server?: Server;
	port = 0;
	faults: Faults = { enrichTimeouts: 0, enrichDelayMs: 30_000, rejectLocalPhones: true, crmUnavailable: 0 };
	contacts: Contact[] = [];
	alerts: unknown[] = [];
	enrichCalls = 0;
	private readonly savedByKey = new Map<string, { status: number; body: unknown }>();
	private nextId = 1;

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
		this.enrichCalls = 0;
		this.savedByKey.clear();
		this.faults = { enrichTimeouts: 0, enrichDelayMs: 30_000, rejectLocalPhones: true, crmUnavailable: 0 };
	}

	private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
		const parsed = await readJson(request);
		const body = parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : null;
		const path = new URL(request.url ?? '/', 'http://demo').pathname;
		const route = `${request.method} ${path}`;
		if (route === 'POST /_faults') {
			this.faults = { ...this.faults, ...(body as Partial<Faults>) };
			return send(response, 200, this.faults);
		}
		if (route === 'POST /_reset') {
			this.reset();
			return send(response, 200, { reset: true });
		}
		if (route === 'POST /enrich') {
			this.enrichCalls++;
			if (this.faults.enrichTimeouts > 0) {
				this.faults.enrichTimeouts--;
				await new Promise((r) => setTimeout(r, this.faults.enrichDelayMs));
			}
			const email = String(body?.email ?? '');
			const domain = email.split('@')[1] ?? 'unknown';
			return send(response, 200, { email, company: domain.split('.')[0].replace(/^./, (c) => c.toUpperCase()), size: 50 });
		}
		if (route === 'GET /crm/contacts') return send(response, 200, this.contacts);
		if (route === 'POST /crm/contacts') return this.upsertContact(request, response, body ?? {});
		if (route === 'POST /alerts') {
			this.alerts.push(body);
			return send(response, 201, { received: this.alerts.length });
		}
		if (route === 'GET /alerts') return send(response, 200, this.alerts);
		return send(response, 404, { message: `no route ${route}` });
	}

	/** Upsert by email; a repeated Idempotency-Key gets the saved answer and writes nothing. */
	private upsertContact(request: IncomingMessage, response: ServerResponse, body: Record<string, unknown>): void {
		const key = request.headers['idempotency-key'] as string | undefined;
		if (this.faults.crmUnavailable > 0) {
			this.faults.crmUnavailable--;
			return send(response, 503, { message: 'CRM maintenance, try again later' });
		}
		const saved = key ? this.savedByKey.get(key) : undefined;
		if (saved) return send(response, saved.status, saved.body, { 'idempotent-replayed': 'true' });
		const email = String(body.email ?? '').trim().toLowerCase();
		if (!email) return send(response, 422, { message: 'email: required' });
		const phone = body.phone === undefined ? undefined : String(body.phone);
		if (phone && this.faults.rejectLocalPhones && !phone.startsWith('+')) {
			return send(response, 422, { message: `phone: invalid format "${phone}", expected +<country code><number>` });
		}
		const now = new Date().toISOString();
		let contact = this.contacts.find((c) => c.email === email);
		if (contact) Object.assign(contact, { name: body.name ?? contact.name, phone: phone ?? contact.phone, company: body.company ?? contact.company, updatedAt: now, writes: contact.writes + 1 });
		else {
			contact = { id: this.nextId++, email, name: body.name as string | undefined, phone, company: body.company as string | undefined, createdAt: now, updatedAt: now, writes: 1 };
			this.contacts.push(contact);
		}
		const answer = { status: 201, body: { ...contact } };
		if (key) this.savedByKey.set(key, answer);
		return send(response, answer.status, answer.body);
	}
}
