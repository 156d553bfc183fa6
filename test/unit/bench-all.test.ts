import { judge, referenceFigures } from '../../scripts/bench-all';

/** The verdict on one figure of one benchmark, this run's value against the page's. */
const verdictOn = (bench: string, figure: string, now: number, before: number) =>
	judge(bench, { bench, [figure]: now }, { bench, [figure]: before })[0].verdict;

describe('bench:all against docs/benchmarks.md', () => {
	it('takes the first JSON line of each benchmark in the page as its reference', () => {
		const page = [
			'Current: `{"bench":"deadletters","park_10k_s":0.8,"stats_ms":60}`.',
			'Earlier: `{"bench":"deadletters","park_10k_s":2.5,"stats_ms":155}` and',
			'`{"bench":"dedupe","speedup_vs_remove_duplicates":22.3}`; `{"bench": not json}`.',
		].join('\n');
		const figures = referenceFigures(page);
		expect(figures.get('deadletters')).toEqual({
			bench: 'deadletters',
			park_10k_s: 0.8,
			stats_ms: 60,
		});
		expect(figures.get('dedupe')).toEqual({ bench: 'dedupe', speedup_vs_remove_duplicates: 22.3 });
		expect(figures.size).toBe(2);
	});

	it('flags a time that grew by more than 20% and a target missed, and passes the rest', () => {
		const rows = judge(
			'deadletters',
			{ bench: 'deadletters', park_10k_s: 1.0, stats_ms: 130, park_vs_postgres_insert: 1.1 },
			{ bench: 'deadletters', park_10k_s: 0.9, stats_ms: 60, park_vs_postgres_insert: 1.0 },
		);
		const verdict = (figure: string) => rows.find((r) => r.figure === figure)?.verdict;
		expect(verdict('park_10k_s')).toBe('meets target <= 2');
		expect(verdict('stats_ms')).toBe('MISSES target <= 100; SLIPPED more than 20%');
		expect(verdict('park_vs_postgres_insert')).toBe('meets target <= 1.2');
	});

	it('reads a speedup or a throughput as better when higher', () => {
		const rows = judge(
			'dedupe',
			{ bench: 'dedupe', speedup_vs_remove_duplicates: 17, cost_10m_vs_10k: 1.3 },
			{ bench: 'dedupe', speedup_vs_remove_duplicates: 22.3, cost_10m_vs_10k: 1.3 },
		);
		expect(rows.find((r) => r.figure === 'speedup_vs_remove_duplicates')?.verdict).toBe(
			'MISSES target >= 20; SLIPPED more than 20%',
		);
		expect(rows.find((r) => r.figure === 'cost_10m_vs_10k')?.verdict).toBe('');
		expect(verdictOn('queue', 'ratio_median', 1.3, 0.9)).toBe('meets target >= 0.9');
		// bench:write's figure is the HTTP Request node's time over ours: less is a slip.
		expect(verdictOn('write', 'live_vs_http_request', 0.8, 1.16)).toBe('SLIPPED more than 20%');
	});

	it('judges a figure in milliseconds near zero by 5 ms, not by 20% of almost nothing', () => {
		const rows = judge(
			'latency',
			{ bench: 'latency', write_added_p99_ms: 4, dedupe_added_p99_ms: -2, park_added_p99_ms: 9 },
			{ bench: 'latency', write_added_p99_ms: 0, dedupe_added_p99_ms: -8, park_added_p99_ms: 3 },
		);
		const verdict = (figure: string) => rows.find((r) => r.figure === figure)?.verdict;
		// 0 to 4 ms is within the noise, but no longer unjudged: 0 to 6 would slip.
		expect(verdict('write_added_p99_ms')).toBe('meets target <= 5');
		expect(verdict('dedupe_added_p99_ms')).toBe('SLIPPED more than 20%');
		expect(verdict('park_added_p99_ms')).toBe('SLIPPED more than 20%');
		expect(verdictOn('latency', 'write_added_p99_ms', 6, 0)).toBe(
			'MISSES target <= 5; SLIPPED more than 20%',
		);
		// A ratio keeps the 20% rule alone: it has no unit to floor.
		expect(verdictOn('soak', 'p99_during_purge_vs_idle', 2, 1.6)).toBe(
			'MISSES target <= 1.5; SLIPPED more than 20%',
		);
	});

	it('says when a figure of the page was not measured this run', () => {
		const rows = judge('write', { bench: 'write' }, { bench: 'write', live_vs_http_request: 1.16 });
		expect(rows).toEqual([
			{
				bench: 'write',
				figure: 'live_vs_http_request',
				now: undefined,
				reference: 1.16,
				verdict: 'not measured this run',
			},
		]);
	});
});
