import { randomBytes } from 'node:crypto';
import type { Client } from 'pg';
import { DemoApi } from '../../demo/api';
import { type CampaignResult, runCampaign } from '../../scripts/campaign';
import type { WorkflowFile } from '../../dev/harness/n8n';
import { n8nVersionsUnderTest } from '../../dev/harness/paths';
import { waitFor } from '../../dev/harness/ports';
import { pgSettingsFromEnv } from '../../dev/harness/postgres';
import { adminQuery } from '../helpers/store';
import { bundledToActivate, bundledWorkflows } from '../../dev/bundled';
import { type E2eContext, installFor, startWith, stopAndClean } from './fixtures';

/**
 * The secrets canary: the worked example and a small campaign run in a real n8n with one
 * canary secret everywhere a secret can come from (the store credential's password, an
 * Authorization header the write nodes send, the webhook's Authorization, Cookie and X-Api-Key,
 * a password and an API key in the lead, and the target's answers and error bodies, which also
 * echo the request's credentials). Afterwards every column of every table of the
 * store schema, read as text, and everything the alert sink received must be free of it.
 *
 * The write records' saved text (idempotency_keys.last_error and .response_body), which the
 * writer masks, is checked on its own so a leak there names itself.
 */
jest.setTimeout(900_000);

const EXAMPLE = 'relLeadRouting01';
const WRITER_COLUMNS = new Set(['idempotency_keys.last_error', 'idempotency_keys.response_body']);

interface Leak {
	column: string;
	sample: string;
}

/** Every column of every table of the schema, as text, that holds the canary. */
async function leaksIn(
	query: (sql: string, values?: unknown[]) => Promise<Array<Record<string, unknown>>>,
	schema: string,
	canary: string,
): Promise<Leak[]> {
	const columns = (await query(
		`SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, ordinal_position`,
		[schema],
	)) as Array<{ table_name: string; column_name: string }>;
	const leaks: Leak[] = [];
	for (const { table_name: table, column_name: column } of columns) {
		const rows = (await query(
			`SELECT "${column}"::text AS value FROM "${schema}"."${table}" WHERE strpos("${column}"::text, $1) > 0 LIMIT 1`,
			[canary],
		)) as Array<{ value: string }>;
		if (rows.length) {
			const at = rows[0].value.indexOf(canary);
			leaks.push({
				column: `${table}.${column}`,
				sample: rows[0].value.slice(Math.max(0, at - 100), at + 40),
			});
		}
	}
	return leaks;
}

/** How many rows of the schema's tables hold the mask marker: proof the canaries got that far. */
async function maskedRows(
	query: (sql: string, values?: unknown[]) => Promise<Array<Record<string, unknown>>>,
	schema: string,
): Promise<number> {
	const [{ n }] = (await query(
		`SELECT (SELECT count(*) FROM "${schema}".dead_letters d WHERE strpos(d::text, '[masked]') > 0)::int AS n`,
	)) as Array<{ n: number }>;
	return n;
}

describe.each(n8nVersionsUnderTest())('the secrets canary in n8n %s', (version) => {
	describe('the worked example', () => {
		const canary = `cnry${randomBytes(8).toString('hex')}`;
		const demo = new DemoApi();
		let ctx: E2eContext | undefined;
		let leaks: Leak[] = [];

		/** The bundled example, with the write nodes sending an Authorization header carrying the canary. */
		function exampleWithCanaries(workflows: WorkflowFile[]): WorkflowFile[] {
			return workflows.map((workflow) => {
				if (workflow.id !== EXAMPLE) return workflow;
				const nodes = (workflow.nodes as Array<Record<string, unknown>>).map((node) => {
					if (node.type !== 'n8n-nodes-reliability.idempotentHttpWrite') return node;
					return {
						...node,
						parameters: {
							...(node.parameters as object),
							sendHeaders: true,
							headerParameters: {
								parameter: [{ name: 'Authorization', value: `Bearer ${canary}` }],
							},
						},
					};
				});
				return { ...workflow, nodes };
			});
		}

		const post = (lead: Record<string, unknown>) =>
			ctx!.n8n.api.webhook(
				'lead-form',
				{ ...lead, password: canary, note: `sent with api_key=${canary}` },
				{
					authorization: `Bearer ${canary}`,
					cookie: `session=${canary}`,
					'x-api-key': canary,
				},
			);

		beforeAll(async () => {
			await demo.start();
			demo.faults = {
				...demo.faults,
				rejectLocalPhones: true,
				enrichTimeouts: 1,
				enrichDelayMs: 4_000,
				echoSecrets: canary,
			};
			ctx = await startWith(version, 'canary', {
				workflows: exampleWithCanaries(bundledWorkflows(demo.url)),
				activate: bundledToActivate(Number(version.split('.')[0])),
				// Postgres here trusts local connections: the password is carried, never checked.
				store: { ...pgSettingsFromEnv(), password: canary },
			});

			const runs = async (n: number) => ctx!.n8n.api.waitForExecutions(EXAMPLE, n, 180_000);
			// A lead the CRM rejects (local phone): parked with the CRM's message, one alert.
			expect(
				(await post({ submissionId: 'c-local', email: 'a@acme.io', name: 'A', phone: '0151 1' }))
					.status,
			).toBe(200);
			await runs(1);
			// A lead that goes through: the saved answers carry the canary.
			expect(
				(await post({ submissionId: 'c-ok', email: 'b@acme.io', name: 'B', phone: '+49 151 2' }))
					.status,
			).toBe(200);
			await runs(2);
			// A lead without an e-mail: parked as invalid at the door, headers and all.
			expect((await post({ submissionId: 'c-invalid', name: 'C' })).status).toBe(200);
			await runs(3);
			// The CRM down throughout: parked as exhausted with the CRM's message.
			demo.faults.crmUnavailable = 1_000;
			expect(
				(await post({ submissionId: 'c-down', email: 'd@acme.io', name: 'D', phone: '+49 151 4' }))
					.status,
			).toBe(200);
			await runs(4);
			demo.faults.crmUnavailable = 0;
			// Each parked lead is alerted: the CRM's two refusals and the lead rejected at the door.
			await waitFor(
				'three alerts at the sink',
				async () => (demo.alerts.length >= 3 ? true : undefined),
				120_000,
			);
			leaks = await leaksIn((sql, values) => adminQuery(sql, values), ctx!.schema, canary);
		});

		afterAll(async () => {
			await stopAndClean(ctx);
			await demo.stop();
		});

		it('the canary reached the store: three parked leads, masked; three alerts; one contact', async () => {
			const parked = await adminQuery<{ idempotency_key: string }>(
				`SELECT idempotency_key FROM "${ctx!.schema}".dead_letters ORDER BY id`,
			);
			expect(parked.map((p) => p.idempotency_key).sort()).toEqual(
				['c-down:crm-upsert', 'c-invalid', 'c-local:crm-upsert'].sort(),
			);
			expect(await maskedRows((sql, values) => adminQuery(sql, values), ctx!.schema)).toBe(3);
			expect(demo.contacts.map((c) => c.email)).toEqual(['b@acme.io']);
			expect(demo.alerts.length).toBe(3);
		});

		it('no column of any table holds the canary (the write records’ saved text apart)', () => {
			expect(leaks.filter((leak) => !WRITER_COLUMNS.has(leak.column))).toEqual([]);
		});

		it('the alert sink received no canary', () => {
			expect(JSON.stringify(demo.alerts)).not.toContain(canary);
		});

		it('the write records’ saved text (last_error, response_body) holds no canary', () => {
			expect(leaks.filter((leak) => WRITER_COLUMNS.has(leak.column))).toEqual([]);
		});
	});

	describe('a campaign of 100 leads', () => {
		const canary = `cnry${randomBytes(8).toString('hex')}`;
		let result: CampaignResult;
		let leaks: Leak[] = [];
		let masked = 0;
		let alerts = '';

		beforeAll(async () => {
			const say = (line: string): void =>
				void process.stdout.write(`[canary campaign ${version}] ${line}\n`);
			result = await runCampaign({
				items: 100,
				install: installFor(version),
				tarball: process.env.RELIABILITY_TARBALL!,
				postgres: { ...pgSettingsFromEnv(), password: canary },
				// At 5% a run of 100 leads drew no local phone at all once (0.95^100, 0.6%), and so
				// parked nothing; at 15% that chance is 1 in 10 million.
				localPhoneRate: 0.15,
				canary,
				log: say,
				inspect: async ({ admin, schema, demo }) => {
					const query = async (sql: string, values?: unknown[]) =>
						(await (admin as Client).query(sql, values)).rows as Array<Record<string, unknown>>;
					leaks = await leaksIn(query, schema, canary);
					masked = await maskedRows(query, schema);
					alerts = JSON.stringify(demo.alerts);
				},
			});
		});

		it('the campaign ran and parked leads (the canaries reached the store)', () => {
			expect(result.settled).toBe(true);
			expect(result.lost + result.duplicated).toBe(0);
			expect(result.parked).toBeGreaterThan(0);
			expect(masked).toBeGreaterThan(0);
			expect(alerts.length).toBeGreaterThan(2);
		});

		it('no column of any table holds the canary (the write records’ saved text apart), nor the alert sink', () => {
			expect(leaks.filter((leak) => !WRITER_COLUMNS.has(leak.column))).toEqual([]);
			expect(alerts).not.toContain(canary);
		});

		it('the write records’ saved text (last_error, response_body) holds no canary', () => {
			expect(leaks.filter((leak) => WRITER_COLUMNS.has(leak.column))).toEqual([]);
		});
	});
});
