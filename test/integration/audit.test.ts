import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { asWorkflow, auditWorkflow, saveAudits } from '../../lib/audit';
import { type ConsoleRequest, handleConsoleRequest, prometheusMetrics } from '../../lib/console';
import { promtoolProblems } from '../helpers/promtool';
import { adminQuery, testStore } from '../helpers/store';

/**
 * The audit kept in the store: the last audit of each workflow, read back as rows, and the open
 * findings by rule as a Prometheus gauge; an audit of the whole instance forgets the workflows
 * that are gone, an audit of a few keeps the others.
 */
const { store, schema, cleanup } = testStore('audit');
afterAll(cleanup);

const fixture = (name: string) =>
	auditWorkflow(
		asWorkflow(
			JSON.parse(readFileSync(join(__dirname, '../unit/fixtures/unsafe-workflows', name), 'utf8')),
			0,
		),
	);

const rows = async () =>
	await adminQuery<{ workflow_id: string; score: number; rules: string[] }>(
		`SELECT workflow_id, score, (SELECT coalesce(array_agg(f->>'rule' ORDER BY f->>'rule'), '{}') FROM jsonb_array_elements(findings) f) AS rules
		 FROM "${schema}".workflow_audits ORDER BY workflow_id`,
	);

const gauge = async () => {
	const text = await prometheusMetrics(store);
	expect(await promtoolProblems(text)).toEqual([]);
	const families = parsePrometheusTextFormat(text) as Array<{
		name: string;
		metrics: Array<{ labels?: Record<string, string>; value: string }>;
	}>;
	return Object.fromEntries(
		(families.find((f) => f.name === 'reliability_audit_findings')?.metrics ?? []).map((m) => [
			`${m.labels!.rule}/${m.labels!.severity}`,
			Number(m.value),
		]),
	);
};

/** A GET of a console page as n8n's Webhook node hands it over. */
const page = async (query: Record<string, string>) =>
	await handleConsoleRequest(
		store,
		{
			headers: { authorization: `Basic ${Buffer.from('maria:secret').toString('base64')}` },
			query,
			body: {},
		} as ConsoleRequest,
		{ baseUrl: 'https://n8n.example.com/' },
	);

describe('the stored audit', () => {
	it('keeps the last audit of each workflow and counts open findings by rule', async () => {
		await saveAudits(
			store,
			[fixture('order-sync-http-retry.json'), fixture('route-only-write.json')],
			{ wholeInstance: true },
		);
		expect(await rows()).toEqual([
			{
				workflow_id: 'uW2',
				score: 50,
				rules: [
					'http-write-retry-without-key',
					'inbound-write-without-dedupe',
					'input-not-validated',
				],
			},
			{ workflow_id: 'uW6', score: 80, rules: ['failed-items-go-nowhere'] },
		]);
		expect(await gauge()).toEqual({
			'failed-items-go-nowhere/high': 1,
			'http-write-retry-without-key/high': 1,
			'inbound-write-without-dedupe/high': 1,
			'input-not-validated/low': 1,
		});
	});

	it("the console's Audit page shows the instance score, findings by rule and each workflow", async () => {
		const list = await page({ view: 'audit' });
		expect(list.statusCode).toBe(200);
		expect(list.body).toContain('<b class="instance-score">65</b>');
		expect(list.body).toContain('<b class="open-findings">4</b>');
		expect(list.body).toMatch(
			/data-rule="failed-items-go-nowhere"><td><code>failed-items-go-nowhere<\/code><\/td><td>high<\/td><td class="num">1</,
		);
		expect(list.body).toContain('href="https://n8n.example.com/workflow/uW2"');

		const one = await page({ view: 'audit', workflow: 'uW2' });
		expect(one.statusCode).toBe(200);
		expect(one.body).toContain('<h1>Shop order to ERP</h1>');
		expect(one.body).toMatch(/<tr class="step"><td>Create ERP Order<\/td><td>write<\/td>/);
		expect(one.body).toContain('data-rule="http-write-retry-without-key"');
		expect((await page({ view: 'audit', workflow: 'nope' })).statusCode).toBe(404);
	});

	it('an audit of a few workflows replaces theirs and keeps the others', async () => {
		const fixed = fixture('route-only-write.json');
		await saveAudits(store, [{ ...fixed, findings: [], score: 100 }], { wholeInstance: false });
		expect((await rows()).map((r) => [r.workflow_id, r.score])).toEqual([
			['uW2', 50],
			['uW6', 100],
		]);
	});

	it('an audit of the whole instance forgets the workflows no longer in it', async () => {
		await saveAudits(store, [fixture('nightly-invoices.json')], { wholeInstance: true });
		expect((await rows()).map((r) => r.workflow_id)).toEqual(['uW3']);
		expect(await gauge()).toEqual({
			'failed-items-go-nowhere/high': 1,
			'key-from-attempt/high': 1,
			'no-error-workflow/medium': 1,
			'schedule-without-heartbeat/medium': 1,
			'write-not-parked/medium': 1,
		});
	});

	it('the same workflow twice in one input keeps its last audit, and the run saves', async () => {
		const first = fixture('route-only-write.json');
		await saveAudits(store, [first, { ...first, score: 100, findings: [] }], {
			wholeInstance: true,
		});
		expect((await rows()).map((r) => [r.workflow_id, r.score])).toEqual([['uW6', 100]]);
	});

	it('an empty audit of the whole instance leaves nothing', async () => {
		await saveAudits(store, [], { wholeInstance: true });
		expect(await rows()).toEqual([]);
		expect(await gauge()).toEqual({});
	});
});
