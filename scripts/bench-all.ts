/**
 * `npm run bench:all`: runs every benchmark one after another (the package built once), takes
 * the JSON line each prints last, and prints one table of this run's figures beside the reference
 * figures of docs/benchmarks.md (its first JSON line of each benchmark), flagging a figure that
 * slipped by more than 20% and a target this run missed. Ends with a JSON line of its own and
 * exits 1 when anything slipped, missed its target or failed, so a slip is seen the day it
 * happens. `-- --only dedupe,deadletters` runs some of them.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

type Figures = Record<string, unknown>;

/** Every benchmark, in the order they run: the quick ones first. */
const BENCHES = ['dedupe', 'deadletters', 'write', 'latency', 'queue', 'trace', 'soak'] as const;

/** How much worse than the reference a figure may be before it counts as slipped. */
const SLIP = 0.2;

/**
 * A figure in milliseconds must also be this much worse to count as slipped: node times are
 * whole milliseconds, and the added figures (ours minus n8n's node) are differences of two tails
 * that sit near zero, where 20% of the reference is less than a millisecond, or nothing.
 */
const SLIP_FLOOR_MS = 5;

/**
 * Figures where more is better (a speedup, a throughput, ours against the built-in's rate, the
 * built-in's time over ours); every other number is a time, a cost or a ratio of ours to the
 * built-in's time, where less is.
 */
const HIGHER_IS_BETTER =
	/speedup|^ours_per_s$|^ratio(_median|_min|_max)?$|^replay_vs_live$|^live_vs_http_request$/;

/** Figures that only describe the run (sizes, counts): shown, never judged. */
const DESCRIPTIVE =
	/^(rounds|parallel|items|rows_after|store_connections|stored|executions|failed_builtin|builtin_per_s|slice_size|rest_percent)$/;

/** The targets of issue 31 and the design, by benchmark and figure: [limit, 'max' | 'min']. */
const TARGETS: Record<string, Record<string, [number, 'max' | 'min']>> = {
	dedupe: { speedup_vs_remove_duplicates: [20, 'min'] },
	deadletters: {
		park_10k_s: [2, 'max'],
		park_vs_postgres_insert: [1.2, 'max'],
		stats_ms: [100, 'max'],
	},
	latency: {
		write_added_p50_ms: [2, 'max'],
		write_added_p99_ms: [5, 'max'],
		chain_e2e_p50_ratio: [1.1, 'max'],
		chain_e2e_p99_ratio: [1.1, 'max'],
	},
	queue: { ratio_median: [0.9, 'min'], ratio_min: [0.85, 'min'] },
	soak: { p99_during_purge_vs_idle: [1.5, 'max'], p99_during_vacuum_vs_idle: [1.5, 'max'] },
};

const root = join(__dirname, '..');
const say = (line: string): void => void process.stdout.write(`${line}\n`);

/** The first JSON line of each benchmark in docs/benchmarks.md: the figures it reports. */
export function referenceFigures(markdown: string): Map<string, Figures> {
	const found = new Map<string, Figures>();
	for (const match of markdown.matchAll(/`(\{"bench":"[a-z_]+"[^`]*\})`/g)) {
		try {
			const figures = JSON.parse(match[1]) as Figures;
			const name = String(figures.bench);
			if (!found.has(name)) found.set(name, figures);
		} catch {
			// A line that is not JSON is prose, not a figure.
		}
	}
	return found;
}

/** Runs one benchmark script and returns its last JSON line, or why it has none. */
function runBench(name: string): Promise<{ figures?: Figures; error?: string }> {
	return new Promise((resolve) => {
		const child = spawn('npx', ['--no-install', 'tsx', join('scripts', `bench-${name}.ts`)], {
			cwd: root,
			stdio: ['ignore', 'pipe', 'inherit'],
		});
		let out = '';
		child.stdout.on('data', (chunk: Buffer) => {
			out += chunk.toString();
			process.stdout.write(chunk);
		});
		child.on('close', (code) => {
			const line = out
				.split('\n')
				.reverse()
				.find((l) => l.startsWith(`{"bench":"`));
			if (code !== 0 || !line)
				return resolve({ error: `bench:${name} exited ${code} without its JSON line` });
			try {
				resolve({ figures: JSON.parse(line) as Figures });
			} catch {
				resolve({ error: `bench:${name} printed a JSON line that does not parse` });
			}
		});
	});
}

interface Row {
	bench: string;
	figure: string;
	now: number | undefined;
	reference: number | undefined;
	verdict: string;
}

/** One benchmark's figures against the reference and the targets. */
export function judge(bench: string, now: Figures, reference: Figures | undefined): Row[] {
	const names = new Set([...Object.keys(now), ...Object.keys(reference ?? {})]);
	names.delete('bench');
	const rows: Row[] = [];
	for (const figure of names) {
		const current = typeof now[figure] === 'number' ? (now[figure] as number) : undefined;
		const before =
			typeof reference?.[figure] === 'number' ? (reference[figure] as number) : undefined;
		const verdicts: string[] = [];
		const target = TARGETS[bench]?.[figure];
		if (target && current !== undefined) {
			const [limit, kind] = target;
			const met = kind === 'max' ? current <= limit : current >= limit;
			verdicts.push(`${met ? 'meets' : 'MISSES'} target ${kind === 'max' ? '<=' : '>='} ${limit}`);
		}
		if (current !== undefined && before !== undefined && !DESCRIPTIVE.test(figure)) {
			const allowed = Math.max(Math.abs(before) * SLIP, figure.endsWith('_ms') ? SLIP_FLOOR_MS : 0);
			const worse = HIGHER_IS_BETTER.test(figure)
				? current < before * (1 - SLIP)
				: allowed > 0 && current > before + allowed;
			if (worse) verdicts.push(`SLIPPED more than ${SLIP * 100}%`);
		}
		if (current === undefined) verdicts.push('not measured this run');
		rows.push({ bench, figure, now: current, reference: before, verdict: verdicts.join('; ') });
	}
	return rows;
}

async function main(): Promise<void> {
	const onlyAt = process.argv.indexOf('--only');
	const only = onlyAt >= 0 ? new Set((process.argv[onlyAt + 1] ?? '').split(',')) : undefined;
	const benches = BENCHES.filter((name) => !only || only.has(name));
	const references = referenceFigures(readFileSync(join(root, 'docs', 'benchmarks.md'), 'utf8'));

	const rows: Row[] = [];
	const failed: string[] = [];
	for (const name of benches) {
		say(`\n[bench:all] bench:${name}`);
		const { figures, error } = await runBench(name);
		if (!figures) {
			failed.push(error ?? name);
			continue;
		}
		rows.push(...judge(name, figures, references.get(name)));
	}

	say('\n| benchmark | figure | this run | docs/benchmarks.md | verdict |');
	say('|---|---|---:|---:|---|');
	const shown = (n: number | undefined) => (n === undefined ? '–' : String(n));
	for (const r of rows)
		say(`| ${r.bench} | ${r.figure} | ${shown(r.now)} | ${shown(r.reference)} | ${r.verdict} |`);
	for (const f of failed) say(`| – | – | – | – | FAILED: ${f} |`);
	const slipped = rows
		.filter((r) => r.verdict.includes('SLIPPED'))
		.map((r) => `${r.bench}.${r.figure}`);
	const missed = rows
		.filter((r) => r.verdict.includes('MISSES'))
		.map((r) => `${r.bench}.${r.figure}`);
	say('');
	say(
		JSON.stringify({ bench: 'all', ran: benches.length, failed: failed.length, slipped, missed }),
	);
	process.exitCode = failed.length + slipped.length + missed.length > 0 ? 1 : 0;
}

if (require.main === module)
	main().catch((error: unknown) => {
		process.stderr.write(
			`bench:all failed: ${error instanceof Error ? error.stack : String(error)}\n`,
		);
		process.exit(1);
	});
