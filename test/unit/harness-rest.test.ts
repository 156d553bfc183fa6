import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { stringify as stringifyFlatted } from 'flatted';
import { N8nRestClient, nodeOutputs } from '../../dev/harness/rest';

/**
 * The harness reads executions as n8n 1.x on SQLite saves them: the ending status in one
 * statement, the run data in the next. This server answers GET /rest/executions/:id with the
 * status and data the test hands it, in order, to stand in for reads between those statements.
 */
function executionsServer(answers: Array<{ status: string; resultData: object }>) {
	let reads = 0;
	const server: Server = createServer((_request, response) => {
		const answer = answers[Math.min(reads, answers.length - 1)];
		reads += 1;
		response.setHeader('content-type', 'application/json');
		response.end(
			JSON.stringify({
				data: {
					id: '7',
					status: answer.status,
					workflowId: 'w',
					startedAt: new Date(0).toISOString(),
					data: stringifyFlatted({ resultData: answer.resultData }),
				},
			}),
		);
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

const started = { runData: {} };
const ended = {
	runData: { Webhook: [{ startTime: 1, executionTime: 1, data: { main: [[{ json: {} }]] } }] },
	lastNodeExecuted: 'Webhook',
};
/** An execution n8n stopped before its first node, e.g. on a workflow with issues. */
const stoppedBeforeAnyNode = { runData: {}, error: { message: 'The workflow has issues' } };

describe('the harness reading an execution', () => {
	it('reads again while an ended execution still carries the data it started with', async () => {
		const n8n = executionsServer([
			{ status: 'success', resultData: started },
			{ status: 'success', resultData: started },
			{ status: 'success', resultData: ended },
		]);
		const client = new N8nRestClient(await n8n.start(), 1);
		try {
			const execution = await client.execution('7');
			expect(execution.data.resultData.lastNodeExecuted).toBe('Webhook');
			expect(n8n.reads()).toBe(3);
		} finally {
			await n8n.stop();
		}
	});

	it('gives up after 2 s and returns what it read, for nodeOutputs to say what is missing', async () => {
		const n8n = executionsServer([{ status: 'success', resultData: started }]);
		const client = new N8nRestClient(await n8n.start(), 1);
		try {
			const began = Date.now();
			const execution = await client.execution('7');
			expect(Date.now() - began).toBeGreaterThanOrEqual(2_000);
			expect(() => nodeOutputs(execution, 'Create Contact')).toThrow(
				'Node "Create Contact" did not run in execution 7 (success; nodes run: none; last: none; error: none)',
			);
		} finally {
			await n8n.stop();
		}
	});

	it('takes an execution stopped before any node, running, canceled or crashed as read', async () => {
		const cases = [
			{ status: 'error', resultData: stoppedBeforeAnyNode },
			...['running', 'canceled', 'crashed'].map((status) => ({ status, resultData: started })),
		];
		for (const { status, resultData } of cases) {
			const n8n = executionsServer([{ status, resultData }]);
			const client = new N8nRestClient(await n8n.start(), 1);
			try {
				const execution = await client.execution('7');
				expect(execution.status).toBe(status);
				expect(n8n.reads()).toBe(1);
			} finally {
				await n8n.stop();
			}
		}
	});
});
