/**
 * Secrets never land in the dead-letter store: values under these keys (any depth, any case)
 * are replaced before anything is written. Everything else in the payload is kept untouched.
 */
export const ALWAYS_MASKED = ['authorization', 'cookie', 'proxy-authorization'];
export const MASK = '***masked***';

export function maskSecrets<T>(value: T, extraFields: string[] = []): T {
	const masked = new Set([
		...ALWAYS_MASKED,
		...extraFields.map((f) => f.trim().toLowerCase()).filter(Boolean),
	]);
	const walk = (node: unknown): unknown => {
		if (Array.isArray(node)) return node.map(walk);
		if (node === null || typeof node !== 'object') return node;
		const out: Record<string, unknown> = {};
		for (const [key, child] of Object.entries(node as Record<string, unknown>)) {
			out[key] = masked.has(key.toLowerCase()) ? MASK : walk(child);
		}
		return out;
	};
	return walk(value) as T;
}
