import { spawn } from 'node:child_process';

/**
 * `promtool check metrics` (Prometheus's own linter for the text format: types, names, help,
 * label syntax) over a scrape's text. Returns what it reported; empty means accepted. Debian's
 * `prometheus` package ships promtool; PROMTOOL_PATH points elsewhere.
 */
export async function promtoolProblems(text: string): Promise<string[]> {
	const promtool = process.env.PROMTOOL_PATH ?? 'promtool';
	return await new Promise((resolve, reject) => {
		const child = spawn(promtool, ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
		let output = '';
		child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
		child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
		child.on('error', (error: NodeJS.ErrnoException) =>
			reject(
				error.code === 'ENOENT'
					? new Error(
							`${promtool} is not installed: the metrics tests need Prometheus's promtool (apt-get install prometheus, or set PROMTOOL_PATH)`,
						)
					: error,
			),
		);
		child.on('close', (code) => {
			const problems = output
				.split('\n')
				.map((line) => line.trim())
				.filter(Boolean);
			if (code !== 0 && problems.length === 0) problems.push(`promtool exited with ${code}`);
			resolve(code === 0 ? [] : problems);
		});
		child.stdin.end(text);
	});
}
