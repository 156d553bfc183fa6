import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { stringify as stringifyFlatted } from 'flatted';
import { N8nRestClient } from '../../dev/harness/rest';

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

	it('takes a running, canceled or crashed execution as it is read', async () => {
		for (const status of ['running', 'canceled', 'crashed']) {
			const n8n = executionsServer([{ status, resultData: started }]);
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
