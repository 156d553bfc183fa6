// Prints, from jest's --json output, the ten slowest test files with their seconds (so the next
// regression in the suite's time shows in every CI log), then jest's totals as one plain line,
// the last: "N passed, N failed[, N skipped]".
const fs = require('node:fs');
const path = require('node:path');

const results = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const files = (results.testResults || [])
	.map((file) => ({
		name: path.relative(process.cwd(), file.name || file.testFilePath || ''),
		seconds:
			((file.perfStats?.end ?? file.endTime ?? 0) -
				(file.perfStats?.start ?? file.startTime ?? 0)) /
			1000,
	}))
	.filter((file) => file.seconds > 0)
	.sort((a, b) => b.seconds - a.seconds)
	.slice(0, 10);
if (files.length > 0) {
	console.log('[ci] the ten slowest test files:');
	for (const file of files)
		console.log(`[ci]   ${file.seconds.toFixed(0).padStart(5)} s  ${file.name}`);
}
// Where the end-to-end starts of n8n spent their time (dev/harness/n8n.ts appends one line per
// start and per stop to the file RELIABILITY_START_LOG names, given here as the third argument).
const startLog = process.argv[3];
if (startLog && fs.existsSync(startLog)) {
	const sums = {};
	let starts = 0;
	for (const line of fs.readFileSync(startLog, 'utf8').split('\n')) {
		let entry;
		try {
			entry = JSON.parse(line);
		} catch {
			continue; // a line cut short (a file killed mid-write) is no reason to lose the totals
		}
		const { version: _version, ...phases } = entry;
		if (!('stop' in phases)) starts += 1;
		for (const [phase, ms] of Object.entries(phases)) sums[phase] = (sums[phase] ?? 0) + ms;
	}
	const parts = Object.entries(sums).map(([phase, ms]) => `${phase} ${Math.round(ms / 1000)} s`);
	console.log(`[ci] ${starts} starts of n8n in the e2e files: ${parts.join(', ')}`);
}
const skipped = results.numPendingTests + results.numTodoTests;
const failed = results.numFailedTests + (results.numRuntimeErrorTestSuites || 0);
let line = `${results.numPassedTests} passed, ${failed} failed`;
if (skipped > 0) line += `, ${skipped} skipped`;
console.log(line);
