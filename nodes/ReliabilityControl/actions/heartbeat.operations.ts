import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { beat as recordBeat, checkHeartbeats, inRange, LIMITS, type Store } from '../../../lib';
import { toNodeError } from '../../shared/store';

/** Beat: one beat per run (parameters of the first item); outputs the heartbeat's status. */
export async function beat(this: IExecuteFunctions, store: Store): Promise<INodeExecutionData[][]> {
	const schedule = this.getNodeParameter('schedule', 0, 'period') as string;
	try {
		// Checked in the units the node shows, before anything is stored.
		const periodMinutes =
			schedule === 'period'
				? inRange(this.getNodeParameter('periodMinutes', 0, 60), LIMITS.heartbeatPeriodMinutes, 0)
				: undefined;
		const graceMinutes = inRange(
			this.getNodeParameter('graceMinutes', 0, 10),
			LIMITS.heartbeatGraceMinutes,
			0,
		);
		const cron = schedule === 'cron' ? this.getNodeParameter('cron', 0, '') : undefined;
		const status = await recordBeat(store, {
			name: String(this.getNodeParameter('heartbeatName', 0, '') ?? ''),
			periodSeconds: periodMinutes === undefined ? undefined : periodMinutes * 60,
			cron: cron === undefined ? undefined : String(cron),
			graceSeconds: graceMinutes * 60,
		});
		return [[{ json: status as unknown as IDataObject, pairedItem: { item: 0 } }]];
	} catch (error) {
		throw toNodeError(this, error, 0);
	}
}

/** Check: the heartbeats that became late or down, and recoveries, each reported once. */
export async function check(
	this: IExecuteFunctions,
	store: Store,
): Promise<INodeExecutionData[][]> {
	const outputAll = this.getNodeParameter('outputAll', 0, false) as boolean;
	const result = await checkHeartbeats(store).catch((error: unknown) => {
		throw toNodeError(this, error);
	});
	const rows = outputAll
		? result.heartbeats.map((h) => ({
				...h,
				event: result.changes.find((c) => c.name === h.name)?.event ?? null,
			}))
		: result.changes;
	return [rows.map((row) => ({ json: row as unknown as IDataObject, pairedItem: { item: 0 } }))];
}
