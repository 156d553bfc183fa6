import type { IncomingMessage, ServerResponse } from 'node:http';

/** The small JSON helpers the demo API and the test target share. */
export function readJson(request: IncomingMessage): Promise<unknown> {
	return new Promise((resolve) => {
		let text = '';
		request.on('data', (chunk) => (text += chunk));
		request.on('end', () => {
			try {
				resolve(text ? JSON.parse(text) : null);
			} catch {
				resolve(text);
			}
		});
	});
}

export function sendJson(
	response: ServerResponse,
	status: number,
	body: unknown,
	headers: Record<string, string> = {},
): void {
	if (response.destroyed) return;
	response.writeHead(status, { 'content-type': 'application/json', ...headers });
	response.end(JSON.stringify(body));
}
