/** The Postgres SQLSTATE codes the engine reacts to; errors are matched by code, never by text. */
export const SqlState = {
	uniqueViolation: '23505',
	invalidPassword: '28P01',
	invalidAuthorization: '28000',
	insufficientPrivilege: '42501',
	invalidCatalogName: '3D000',
	duplicateSchema: '42P06',
	duplicateTable: '42P07',
	cannotConnectNow: '57P03',
	adminShutdown: '57P01',
} as const;

export const sqlStateOf = (error: unknown): string | undefined =>
	typeof error === 'object' &&
	error !== null &&
	typeof (error as { code?: unknown }).code === 'string'
		? (error as { code: string }).code
		: undefined;

/** Node's socket error codes that mean "the server was not reached". */
export const NETWORK_ERROR_CODES = new Set([
	'ECONNREFUSED',
	'ECONNRESET',
	'ETIMEDOUT',
	'ENOTFOUND',
	'EAI_AGAIN',
	'EHOSTUNREACH',
	'ENETUNREACH',
	'EPIPE',
]);

/** Plain words for those codes, for messages. */
export const NETWORK_ERROR_WORDS: Record<string, string> = {
	ECONNREFUSED: 'connection refused',
	ECONNRESET: 'connection reset',
	ETIMEDOUT: 'timed out',
	ENOTFOUND: 'host not found',
	EAI_AGAIN: 'host name lookup failed',
	EHOSTUNREACH: 'host unreachable',
	ENETUNREACH: 'network unreachable',
	EPIPE: 'connection closed',
};
