import type { Store } from '../store';
import { readKeySql } from './sql';
import type { KeyStatus, WriteRequest } from './types';

/** A key's record as the claim or a read returns it, and the read of one key. */

/** A record as the claim (or a read) returns it. */
export interface KeyRow {
	claimed?: boolean;
	status: KeyStatus | null;
	generation: number | string | null;
	fingerprint: string | null;
	lease_expired: boolean | null;
	response_status: number | null;
	response_headers: Record<string, string> | null;
	response_body: string | null;
	response_truncated: boolean | null;
	attempts: number | null;
	execution_id: string | null;
	/** Milliseconds until the last attempt's window ends (negative once it has). */
	in_flight_ms: number | string | null;
	/** Compensated: when, by whom, and for which dead letter. */
	compensated_at?: Date | string | null;
	compensated_by?: string | null;
	compensated_for?: string | null;
	/** Claimed with its first attempt started: until when (local clock) the lease surely holds. */
	started_until?: number;
}

const emptyRow: KeyRow = {
	status: null,
	generation: null,
	fingerprint: null,
	lease_expired: null,
	response_status: null,
	response_headers: null,
	response_body: null,
	response_truncated: null,
	attempts: null,
	execution_id: null,
	in_flight_ms: null,
};

/** The key's record as it is now; an empty row when there is none. */
export async function readKeyRow(store: Store, request: WriteRequest): Promise<KeyRow> {
	const [fresh] = await store.query<KeyRow>(
		readKeySql(store, { scope: request.scope, key: request.key }),
	);
	return fresh ?? emptyRow;
}
