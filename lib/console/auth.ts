import type { ConsoleOptions, ConsoleRequest } from './types';
import { str } from './values';

/** Who is signed in: the operator every action is recorded under. */
function header(headers: Record<string, unknown> | undefined, name: string): string {
	if (!headers) return '';
	const wanted = name.toLowerCase();
	for (const [key, value] of Object.entries(headers))
		if (key.toLowerCase() === wanted) return str(value);
	return '';
}

/** The signed-in operator: the proxy's header when configured, else the Basic auth user name. */
export function operatorOf(request: ConsoleRequest, options: ConsoleOptions = {}): string | null {
	if (options.operatorHeader) {
		const fromProxy = header(request.headers, options.operatorHeader);
		if (fromProxy) return fromProxy;
	}
	const authorization = header(request.headers, 'authorization');
	const basic = /^Basic\s+(.+)$/i.exec(authorization);
	if (basic) {
		const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
		const user = decoded.includes(':') ? decoded.slice(0, decoded.indexOf(':')) : decoded;
		if (user.trim()) return user.trim();
	}
	return null;
}
