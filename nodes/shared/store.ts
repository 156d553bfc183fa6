import type {
	ICredentialDataDecryptedObject,
	ICredentialTestFunctions,
	ICredentialsDecrypted,
	IExecuteFunctions,
	INodeCredentialTestResult,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import { diagnoseStore, getStore, isReliabilityError, type Store, toStoreConfig } from '../../lib';
import { holdAfterResume } from './executionEnd';

const STORE_CREDENTIAL = 'reliabilityStoreApi';

/** The credential test button: connect and say what was found, or what failed. */
export async function reliabilityStoreTest(
	this: ICredentialTestFunctions,
	credential: ICredentialsDecrypted,
): Promise<INodeCredentialTestResult> {
	const result = await diagnoseStore((credential.data ?? {}) as Record<string, unknown>);
	return { status: result.ok ? 'OK' : 'Error', message: result.message };
}

/**
 * The store credential as n8n decrypts it for this execution (a read of n8n's database). A node
 * that reads another credential too can start this one first and hand it to storeFor.
 */
export const storeCredentialOf = (
	context: IExecuteFunctions,
): Promise<ICredentialDataDecryptedObject> => context.getCredentials(STORE_CREDENTIAL);

/**
 * The shared, migrated store for this node's credential; fails the execution before any side
 * effect. Called inside showingErrors (the routers, the write), which shows what it throws. Every
 * node of the package gets its store here, so here an execution that resumed after a Wait, with
 * new hooks, has its inbox claims held again until it ends (holdAfterResume); a store error there
 * leaves them to Recover, which asks n8n how the execution ended.
 */
export async function storeFor(
	context: IExecuteFunctions,
	credential: Promise<ICredentialDataDecryptedObject> = storeCredentialOf(context),
): Promise<Store> {
	const credentials = await credential;
	const store = getStore(toStoreConfig(credentials as Record<string, unknown>));
	await store.ready();
	await holdAfterResume(context, store).catch(() => undefined);
	return store;
}

/** Turns an engine error into the NodeOperationError n8n shows, keeping the item index. */
export function toNodeError(
	context: IExecuteFunctions,
	error: unknown,
	itemIndex?: number,
): NodeOperationError {
	if (error instanceof NodeOperationError) return error;
	if (isReliabilityError(error)) {
		const index = (error as { itemIndex?: number }).itemIndex ?? itemIndex;
		return new NodeOperationError(context.getNode(), error.message, {
			itemIndex: index,
			description: error.hint,
		});
	}
	return new NodeOperationError(
		context.getNode(),
		error instanceof Error ? error : new Error(String(error)),
		{ itemIndex },
	);
}
