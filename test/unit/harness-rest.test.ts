import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { stringify as stringifyFlatted } from 'flatted';
import { N8nRestClient, nodeOutputs } from '../../dev/harness/rest';

interface Answer {
	status: string;
	resultData: object;
	/** How long the server takes to answer this read. */
	delayMs?: number;
}

/**
 * The harness reads executions as n8n 1.x on SQLite saves them: the ending status in one
 * statement, the run data in the next. This server answers GET /rest/executions/:id with the
 * status and data the test hands it, in order, to stand in for reads between those statements.
 */
function executionsServer(answers: Answer[]) {
	let reads = 0;
	const server: Server = createServer((_request, response) => {
		const answer = answers[Math.min(reads, answers.length - 1)];
		reads += 1;
		response.setHeader('content-type', 'application/json');
		const body = JSON.stringify({
			data: {
				id: '7',
				status: answer.status,
				workflowId: 'w',
				startedAt: new Date(0).toISOString(),
				data: stringifyFlatted({ resultData: answer.resultData }),
			},
		});
		setTimeout(() => response.end(body), answer.delayMs ?? 0);
	});
	return {
		start: () =>
			new Promise<string>((resolve) =>
				server.listen(0, '127.0.0.1', () =>
					resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
				),
			),
		stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
		reads: () => reads,
	};
}

/** Reads execution 7 from a server giving `answers`; what came back, how long, what was reported. */
async function readThrough(answers: Answer[]) {
	const n8n = executionsServer(answers);
	const client = new N8nRestClient(await n8n.start(), 1);
	const reported: string[] = [];
	const write = jest.spyOn(process.stderr, 'write').mockImplementation((line) => {
		reported.push(String(line));
		return true;
	});
	try {
		const began = Date.now();
		const execution = await client.execution('7');
		return { execution, ms: Date.now() - began, reads: n8n.reads(), reported };
	} finally {
		write.mockRestore();
		await n8n.stop();
	}
}

const started = { runData: {} };
/** Ended: a node's run data, and no lastNodeExecuted (n8n leaves it unset in some runs). */
const ended = {
	runData: { Webhook: [{ startTime: 1, executionTime: 1, data: { main: [[{ json: {} }]] } }] },
};
/** An execution n8n stopped before its first node, e.g. on a workflow with issues. */
const stoppedBeforeAnyNode = { runData: {}, error: { message: 'The workflow has issues' } };

describe('the harness reading an execution', () => {
	it('reads again while an ended execution still carries the data it started with', async () => {
		const { execution, reads, reported } = await readThrough([
			{ status: 'success', resultData: started },
			{ status: 'success', resultData: started },
			{ status: 'success', resultData: ended },
		]);
		expect(Object.keys(execution.data.resultData.runData)).toEqual(['Webhook']);
		expect(reads).toBe(3);
		expect(reported).toEqual([
			expect.stringMatching(
				/execution 7 \(success\) read with no node run and no error; after 3 reads its run data was there/,
			),
		]);
	});

	it('reads again after a first read slower than the wait itself', async () => {
		const { execution, reads } = await readThrough([
			{ status: 'success', resultData: started, delayMs: 2_500 },
			{ status: 'success', resultData: ended },
		]);
		expect(Object.keys(execution.data.resultData.runData)).toEqual(['Webhook']);
		expect(reads).toBe(2);
	});

	it('gives up 2 s after the first read and returns it, for nodeOutputs to say what is missing', async () => {
		const { execution, ms, reported } = await readThrough([
			{ status: 'success', resultData: started },
		]);
		expect(ms).toBeGreaterThanOrEqual(2_000);
		expect(ms).toBeLessThan(3_500);
		expect(reported).toEqual([expect.stringMatching(/reads it still had none/)]);
		expect(() => nodeOutputs(execution, 'Create Contact')).toThrow(
			'Node "Create Contact" did not run in execution 7 (success; nodes run: none; last: none; error: none)',
		);
	});

	it('takes an execution stopped before any node, running, canceled or crashed as read', async () => {
		const cases = [
			{ status: 'error', resultData: stoppedBeforeAnyNode },
			...['running', 'canceled', 'crashed'].map((status) => ({ status, resultData: started })),
		];
		for (const answer of cases) {
			const { execution, reads, reported } = await readThrough([answer]);
			expect(execution.status).toBe(answer.status);
			expect(reads).toBe(1);
			expect(reported).toEqual([]);
		}
	});
});
