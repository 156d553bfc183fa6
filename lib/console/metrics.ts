import { auditFindingCounts } from '../audit';
import { listHeartbeats, listPauses } from '../control';
import { heldByIntegration } from '../deadletter';
import { maskText } from '../masking';
import type { Store } from '../store';
import { openDeadLettersSql, parkedTotalsSql } from './sql';

/**
 * The store's state in Prometheus text exposition format (version 0.0.4), for a scrape of the
 * bundled metrics webhook: open dead letters by workflow, step, reason and status, the oldest
 * open item's age, held items per integration, paused integrations and workflows, and heartbeat
 * states, and the last audit's open findings by rule, as gauges read from the store as it is now; and one counter, the items parked so far
 * by workflow and step (`increase()` over a day gives that day's parks). Every label takes
 * values from a bounded set (workflows, steps, error classes, statuses, names an operator
 * chose), never from days, messages or payloads, so the number of series does not grow with
 * time.
 */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** A label value escaped as the format requires: backslash, double quote and newline. */
export const escapeLabel = (value: string): string =>
	value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

const labels = (pairs: Record<string, string>): string =>
	`{${Object.entries(pairs)
		.map(([k, v]) => `${k}="${escapeLabel(maskText(v))}"`)
		.join(',')}}`;

const number = (n: number): string =>
	Number.isFinite(n) ? String(Math.round(n * 1000) / 1000) : 'NaN';

class Exposition {
	private readonly lines: string[] = [];

	metric(
		name: string,
		help: string,
		samples: Array<[Record<string, string>, number]>,
		type: 'gauge' | 'counter' = 'gauge',
	): void {
		this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
		for (const [pairs, value] of samples)
			this.lines.push(`${name}${Object.keys(pairs).length ? labels(pairs) : ''} ${number(value)}`);
	}

	toString(): string {
		return `${this.lines.join('\n')}\n`;
	}
}

export async function prometheusMetrics(store: Store): Promise<string> {
	const [open, held, parked, pauses, heartbeats, findings] = await Promise.all([
		store.query<{
			workflow_id: string;
			workflow_name: string;
			step: string;
			error_class: string;
			status: string;
			n: number;
			oldest_seconds: number;
		}>(openDeadLettersSql(store)),
		heldByIntegration(store),
		store.query<{ workflow_id: string; step: string; n: string }>(parkedTotalsSql(store)),
		listPauses(store),
		listHeartbeats(store),
		auditFindingCounts(store),
	]);
	const out = new Exposition();
	out.metric(
		'reliability_dead_letters_open',
		'Open dead letters (new, being fixed, replay requested, held) by workflow, step, reason and status.',
		open.map((r) => [
			{
				workflow_id: r.workflow_id,
				workflow: r.workflow_name,
				step: r.step,
				reason: r.error_class,
				status: r.status,
			},
			r.n,
		]),
	);
	out.metric(
		'reliability_dead_letters_open_all',
		'All open dead letters, whatever their workflow, step, reason and status (0 when none).',
		[[{}, open.reduce((sum, r) => sum + r.n, 0)]],
	);
	// Oldest per workflow and step, over the items waiting for a person (held ones wait for a resume).
	const oldest = new Map<
		string,
		{ workflow_id: string; workflow: string; step: string; seconds: number }
	>();
	for (const r of open) {
		if (r.status === 'held') continue;
		const key = JSON.stringify([r.workflow_id, r.step]);
		const seen = oldest.get(key);
		if (!seen || r.oldest_seconds > seen.seconds)
			oldest.set(key, {
				workflow_id: r.workflow_id,
				workflow: r.workflow_name,
				step: r.step,
				seconds: r.oldest_seconds,
			});
	}
	out.metric(
		'reliability_dead_letters_oldest_age_seconds',
		'Age of the oldest open dead letter waiting for a person (held items excluded), by workflow and step.',
		[...oldest.values()].map((o) => [
			{ workflow_id: o.workflow_id, workflow: o.workflow, step: o.step },
			o.seconds,
		]),
	);
	out.metric(
		'reliability_dead_letters_parked_total',
		'Items parked so far, by workflow and step (a record parked again while open counts once).',
		parked.map((p) => [{ workflow_id: p.workflow_id, step: p.step }, Number(p.n)]),
		'counter',
	);
	out.metric(
		'reliability_held_items',
		'Dead letters held because their integration is paused or its breaker is open, by integration.',
		held.map((h) => [{ integration: h.integration }, h.held]),
	);
	out.metric(
		'reliability_paused',
		'1 while an integration or workflow is paused, 0 once resumed.',
		pauses.map((p) => [{ scope: p.scope, name: p.name }, p.paused ? 1 : 0]),
	);
	out.metric(
		'reliability_heartbeat_state',
		'1 for the state each heartbeat is in now (up, late or down), 0 for the others.',
		heartbeats.flatMap((h) =>
			(['up', 'late', 'down'] as const).map((state): [Record<string, string>, number] => [
				{ name: h.name, state },
				h.state === state ? 1 : 0,
			]),
		),
	);
	out.metric(
		'reliability_heartbeats',
		'How many heartbeats are up, late and down.',
		(['up', 'late', 'down'] as const).map((state) => [
			{ state },
			heartbeats.filter((h) => h.state === state).length,
		]),
	);
	out.metric(
		'reliability_heartbeat_last_beat_timestamp_seconds',
		'When each heartbeat last beat (Unix time).',
		heartbeats.map((h) => [{ name: h.name }, h.lastBeatAt.getTime() / 1000]),
	);
	out.metric(
		'reliability_audit_findings',
		'Open findings of the last audit of each workflow (Reliability Control > Audit), by rule and severity.',
		findings.map((f) => [{ rule: f.rule, severity: f.severity }, f.n]),
	);
	return out.toString();
}
