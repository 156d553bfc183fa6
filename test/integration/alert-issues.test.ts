import {
	type AlertSettings,
	ImpactClass,
	type Notification,
	notifyAlerts,
	parseWorkingHours,
	sweepAlerts,
} from '../../lib/alerts';
import { type ParkRequest, unalertedLetters, updateDeadLetterStatuses } from '../../lib/deadletter';
import { parkAll } from '../helpers/park';
import { adminQuery, testStore } from '../helpers/store';
import { sleep } from '../helpers/sleep';

/**
 * Alerts grouped by cause, on real Postgres: what a receiver gets when one mapping error parks
 * hundreds of leads (one trigger, updates within the interval, one resolve once every item is
 * closed), where each goes by impact and the owner's hours, and the ceiling per owner and hour.
 */
const { store, schema, cleanup } = testStore('alert_issues');
afterAll(cleanup);

const lead = (n: number, overrides: Partial<ParkRequest> = {}): ParkRequest => ({
	workflowId: 'wfLeads',
	workflowName: 'Lead routing',
	step: 'Upsert Contact',
	integration: 'crm',
	errorClass: 'permanent',
	errorMessage: `phone: invalid format "0151 ${1000 + n}"`,
	errorStatus: 422,
	idempotencyKey: `lead-${n}:crm-upsert`,
	impact: 'lead not in CRM',
	owner: 'sales-ops',
	payload: { lead: n },
	...overrides,
});

/** Parks the leads and hands their records to Notify, as the Alert workflow receives them. */
async function parkAndNotify(requests: ParkRequest[], settings: AlertSettings) {
	const parked = await parkAll(store, requests);
	const records = requests.map((r, i) => ({ ...r, deadLetterId: parked[i].id }));
	const results = await notifyAlerts(store, records, settings);
	return { ids: parked.map((p) => p.id), sent: results.flatMap((r) => r.notifications), results };
}

const actions = (sent: Notification[]) => sent.map((n) => `${n.action}:${n.route}`);

describe('alerts grouped by cause', () => {
	const settings: AlertSettings = {
		impactRules: [{ match: 'crm', impact: ImpactClass.customer }],
		consoleUrl: 'https://n8n.example/webhook/reliability-console',
		updateIntervalSeconds: 3600,
	};

	it('300 leads parked by one mapping error are one page, one issue with 300 items, and after their replay one resolve', async () => {
		const first = await parkAndNotify([lead(0)], settings);
		expect(actions(first.sent)).toEqual(['trigger:page']);
		const [trigger] = first.sent;
		expect(trigger.text.split('\n')[0]).toBe('Lead routing: lead not in CRM (lead-0:crm-upsert)');
		expect(trigger.pagerDuty).toMatchObject({
			event_action: 'trigger',
			dedup_key: trigger.dedupKey,
			payload: { severity: 'critical', source: 'Lead routing' },
		});

		// The other 299 park in batches, as executions end: inside the interval, nothing is sent.
		const rest = Array.from({ length: 299 }, (_, i) => lead(i + 1));
		const later: Notification[] = [];
		const ids = [...first.ids];
		for (let at = 0; at < rest.length; at += 50) {
			const batch = await parkAndNotify(rest.slice(at, at + 50), settings);
			later.push(...batch.sent);
			ids.push(...batch.ids);
		}
		expect(later).toEqual([]);
		const [issue] = await adminQuery<{ id: string; items: number; open_items: number }>(
			`SELECT id, items, open_items FROM "${schema}".alert_issues`,
		);
		expect(issue).toMatchObject({ items: 300, open_items: 300 });
		expect(trigger.issue).toMatchObject({
			id: String(issue.id),
			link: `https://n8n.example/webhook/reliability-console?issue=${issue.id}`,
		});

		// The sweep sends nothing while items are open and the interval has not passed.
		expect(await sweepAlerts(store)).toEqual([]);

		// The mapping is fixed; every lead is replayed, and every replay succeeds.
		await updateDeadLetterStatuses(store, ids, {
			to: 'replay_requested',
			actor: 'maria',
			reason: 'country code added',
		});
		expect(await sweepAlerts(store)).toEqual([]);
		await updateDeadLetterStatuses(store, ids, {
			to: 'replayed',
			actor: 'replay workflow',
			reason: 'replayed',
		});
		const swept = await sweepAlerts(store);
		expect(actions(swept)).toEqual(['resolve:page']);
		expect(swept[0]).toMatchObject({
			dedupKey: trigger.dedupKey,
			pagerDuty: { event_action: 'resolve', dedup_key: trigger.dedupKey },
		});
		// Once.
		expect(await sweepAlerts(store)).toEqual([]);

		// The cause parks again: a new issue, which triggers again.
		const again = await parkAndNotify([lead(1000)], settings);
		expect(actions(again.sent)).toEqual(['trigger:page']);
		expect(again.sent[0].dedupKey).not.toBe(trigger.dedupKey);
	});

	it('a later item of an issue updates its count once the interval has passed, at most once per interval', async () => {
		const quick = { ...settings, updateIntervalSeconds: 1 };
		const cause = (n: number) =>
			lead(n, {
				step: 'Assign Owner',
				errorMessage: `owner ${n} unknown`,
				idempotencyKey: `o-${n}`,
			});
		expect(actions((await parkAndNotify([cause(1)], quick)).sent)).toEqual(['trigger:page']);
		expect((await parkAndNotify([cause(2)], quick)).sent).toEqual([]);
		await sleep(1100);
		const update = await parkAndNotify([cause(3), cause(4)], quick);
		expect(actions(update.sent)).toEqual(['update:page']);
		expect(update.sent[0].text).toMatch(/: 4 items of the same cause \(4 open\)/);
		expect(update.sent[0].text).toContain('First: o-1; latest: o-4');
		// Nothing new since: the sweep has nothing to update.
		expect(await sweepAlerts(store)).toEqual([]);
		// An item that joins inside the interval is counted by the sweep once the interval passed.
		expect((await parkAndNotify([cause(5)], quick)).sent).toEqual([]);
		await sleep(1100);
		const swept = await sweepAlerts(store);
		expect(actions(swept)).toEqual(['update:page']);
		expect(swept[0].text).toMatch(/: 5 items of the same cause/);
	});

	it("routes by impact and the owner's hours: an internal failure at 03:00 pages nobody and waits for the digest", async () => {
		const routed: AlertSettings = {
			impactRules: [
				{ match: 'billing', impact: ImpactClass.money },
				{ match: 'Nightly export', impact: ImpactClass.internal },
			],
			owners: [parseWorkingHours('data', 'Mon-Fri 09:00-17:00', 'Europe/Berlin')],
		};
		// 03:00 in Berlin on a Wednesday (winter: UTC+1).
		const night = new Date('2026-12-02T02:00:00Z');
		const internal = await parkAndNotify(
			[
				lead(1, {
					workflowId: 'wfExport',
					workflowName: 'Nightly export',
					integration: 'warehouse',
					owner: 'data',
					idempotencyKey: 'export-1',
					errorMessage: 'warehouse refused the load',
				}),
			],
			{ ...routed, at: night },
		);
		expect(internal.sent).toEqual([]);
		expect(internal.results[0]).toMatchObject({ digest: true });
		const [issue] = await adminQuery<{ route: string; impact: string }>(
			`SELECT route, impact FROM "${schema}".alert_issues WHERE workflow_id = 'wfExport'`,
		);
		expect(issue).toEqual({ route: 'digest', impact: 'internal' });

		// Money pages at any hour.
		const money = await parkAndNotify(
			[
				lead(2, {
					integration: 'billing',
					owner: 'data',
					idempotencyKey: 'inv-2',
					errorMessage: 'card declined',
				}),
			],
			{ ...routed, at: night },
		);
		expect(actions(money.sent)).toEqual(['trigger:page']);
		// The same internal failure at 10:00 goes to the owner's channel.
		const day = await parkAndNotify(
			[
				lead(3, {
					workflowId: 'wfExport2',
					workflowName: 'Nightly export',
					integration: 'warehouse',
					owner: 'data',
					idempotencyKey: 'export-3',
				}),
			],
			{ ...routed, at: new Date('2026-12-02T09:00:00Z') },
		);
		expect(actions(day.sent)).toEqual(['trigger:channel']);
	});

	it('with nothing configured every alert goes to the channel, at any hour', async () => {
		const sent = await parkAndNotify(
			[
				lead(1, {
					integration: 'erp',
					idempotencyKey: 'erp-1',
					errorMessage: 'erp down',
					owner: 'ops',
				}),
			],
			{ at: new Date('2026-12-06T02:00:00Z') },
		);
		expect(actions(sent.sent)).toEqual(['trigger:channel']);
	});

	it('an item that succeeded between its park and its alert alerts nobody and joins no issue', async () => {
		const request = lead(1, {
			integration: 'billing',
			idempotencyKey: 'inv-1:post',
			errorClass: 'unknown_outcome',
			errorMessage: 'response lost after the request was sent',
		});
		const [parked] = await parkAll(store, [request]);
		// Another delivery of the item took the key over and succeeded: its letter closed.
		await updateDeadLetterStatuses(store, [parked.id], {
			to: 'replayed',
			actor: 'Idempotent HTTP Write',
			reason: 'a later run of this key succeeded',
		});
		const results = await notifyAlerts(store, [{ ...request, deadLetterId: parked.id }], settings);
		expect(results).toEqual([{ index: 0, notifications: [], closed: true }]);
		const [letter] = await adminQuery<{ issue_id: string | null }>(
			`SELECT issue_id FROM "${schema}".dead_letters WHERE id = $1`,
			[parked.id],
		);
		expect(letter.issue_id).toBeNull();
	});

	it('past the ceiling an owner gets nothing more that hour, then one summary of what was held back', async () => {
		const capped: AlertSettings = { ceilingPerHour: 3 };
		const distinct = (n: number) =>
			lead(n, {
				owner: 'finance',
				integration: 'ledger',
				step: `Step ${String.fromCharCode(65 + n)}`,
				idempotencyKey: `ledger-${n}`,
			});
		const sent = await parkAndNotify(
			Array.from({ length: 7 }, (_, n) => distinct(n)),
			capped,
		);
		expect(sent.sent).toHaveLength(3);
		const swept = await sweepAlerts(store);
		const summaries = swept.filter((n) => n.action === 'summary');
		expect(summaries).toHaveLength(1);
		expect(summaries[0].text).toMatch(/^4 alerts for finance held back since/);
		// Nothing is dropped from the store: every item is parked and in its issue.
		const [{ n }] = await adminQuery<{ n: number }>(
			`SELECT count(*)::int AS n FROM "${schema}".dead_letters WHERE owner = 'finance' AND issue_id IS NOT NULL`,
		);
		expect(n).toBe(7);
		// One summary an hour.
		expect((await parkAndNotify([distinct(9)], capped)).sent).toEqual([]);
		expect((await sweepAlerts(store)).filter((x) => x.action === 'summary')).toEqual([]);
	});

	it('two executions parking the same cause at once open one issue and send one trigger', async () => {
		const same = (n: number) =>
			lead(n, { step: 'Race', errorMessage: 'crm refused the owner', idempotencyKey: `race-${n}` });
		const both = await Promise.all([
			parkAndNotify([same(1), same(2)], settings),
			parkAndNotify([same(3), same(4)], settings),
		]);
		expect(both.flatMap((b) => b.sent).map((n) => n.action)).toEqual(['trigger']);
		const issues = await adminQuery<{ items: number }>(
			`SELECT items FROM "${schema}".alert_issues WHERE step = 'Race'`,
		);
		expect(issues).toEqual([{ items: 4 }]);
	});

	it('a letter whose run died before its Alert is alerted after the grace, once, though its Alert comes late too', async () => {
		const orphan = (n: number, overrides: Partial<ParkRequest> = {}) =>
			lead(n, {
				workflowId: 'wfOrphans',
				step: 'Orphan',
				errorMessage: 'crm refused the record',
				idempotencyKey: `orphan-${n}:crm-upsert`,
				executionId: `exec-orphan-${n}`,
				...overrides,
			});
		// 1 was alerted as usual; 2's run was killed between its park and its Alert; 3's execution
		// had its items kept by an inbox, whose own letter speaks for the item.
		const alerted = await parkAndNotify([orphan(1)], settings);
		expect(actions(alerted.sent)).toEqual(['trigger:page']);
		const [killed, kept] = await parkAll(store, [orphan(2), orphan(3)]);
		await adminQuery(
			`INSERT INTO "${schema}".processed_events (consumer, event_id, status, lease_until, expires_at, execution_id, payload)
			 VALUES ('orphans', 'lead-3', 'failed', now(), now() + interval '1 day', 'exec-orphan-3', '{"lead": 3}')`,
		);
		const unalerted = () => unalertedLetters(store, { limit: 10, workflowId: 'wfOrphans' });
		// Within the grace the run's own Alert may still be under way.
		expect(await unalerted()).toEqual([]);
		await adminQuery(
			`UPDATE "${schema}".dead_letters SET updated_at = now() - interval '5 minutes' WHERE workflow_id = 'wfOrphans'`,
		);
		const found = await unalerted();
		expect(found.map((l) => String(l.id))).toEqual([String(killed.id)]);
		expect(kept.id).not.toBe(killed.id);
		// Recover hands it to the Alert workflow: its issue is the one 1 opened, counted, no page.
		const swept = await notifyAlerts(store, found, settings);
		expect(swept.flatMap((r) => r.notifications)).toEqual([]);
		expect(await unalerted()).toEqual([]);
		const [issue] = await adminQuery<{ items: number }>(
			`SELECT items FROM "${schema}".alert_issues WHERE step = 'Orphan'`,
		);
		expect(issue.items).toBe(2);
		// The killed run's Alert, had it come late after all, pages nobody a second time.
		const late = await notifyAlerts(store, [{ ...orphan(2), deadLetterId: killed.id }], settings);
		expect(late.flatMap((r) => r.notifications)).toEqual([]);
	});

	it('an unalerted letter of a new cause opens its issue and pages once when Recover hands it over', async () => {
		const [killed] = await parkAll(store, [
			lead(1, {
				workflowId: 'wfOrphanAlone',
				step: 'Alone',
				errorMessage: 'ledger refused the invoice',
				idempotencyKey: 'inv-alone:post',
				executionId: 'exec-alone',
			}),
		]);
		await adminQuery(
			`UPDATE "${schema}".dead_letters SET updated_at = now() - interval '5 minutes' WHERE id = $1`,
			[killed.id],
		);
		const found = await unalertedLetters(store, { limit: 10, workflowId: 'wfOrphanAlone' });
		const first = await notifyAlerts(store, found, settings);
		const sent = first.flatMap((r) => r.notifications);
		expect(actions(sent)).toEqual(['trigger:page']);
		expect(sent[0].text.split('\n')[0]).toContain('(inv-alone:post)');
		// The next Recover run finds nothing more to hand over.
		expect(await unalertedLetters(store, { limit: 10, workflowId: 'wfOrphanAlone' })).toEqual([]);
	});

	it('a heartbeat change is no dead letter: it alerts on its own, every time', async () => {
		const beat = {
			name: 'nightly-export',
			event: 'down',
			owner: 'data',
			workflowName: 'Nightly export',
		};
		const first = await notifyAlerts(store, [beat, beat], {});
		expect(first.flatMap((r) => r.notifications).map((n) => n.action)).toEqual([
			'trigger',
			'trigger',
		]);
	});
});
