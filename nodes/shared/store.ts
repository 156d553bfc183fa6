import type {
	ICredentialTestFunctions,
	ICredentialsDecrypted,
	IExecuteFunctions,
	INodeCredentialTestResult,
} from 'n8n-workflow';
import { ExecutionBaseError, NodeOperationError } from 'n8n-workflow';
import { diagnoseStore, getStore, isReliabilityError, type Store, toStoreConfig } from '../../lib';

const STORE_CREDENTIAL = 'reliabilityStoreApi';

/** The credential test button: connect and say what was found, or what failed. */
export async function reliabilityStoreTest(
	this: ICredentialTestFunctions,
	credential: ICredentialsDecrypted,
): Promise<INodeCredentialTestResult> {
	const result = await diagnoseStore((credential.data ?? {}) as Record<string, unknown>);
	return { status: result.ok ? 'OK' : 'Error', message: result.message };
}

/** The shared, migrated store for this node's credential; fails the execution before any side effect. */
export async function storeFor(context: IExecuteFunctions): Promise<Store> {
	try {
		const credentials = await context.getCredentials(STORE_CREDENTIAL);
		const store = getStore(toStoreConfig(credentials as Record<string, unknown>));
		await store.ready();
		return store;
	} catch (error) {
		// n8n's own errors (the credential's expression, its decryption) say what to show already.
		throw error instanceof ExecutionBaseError ? error : toNodeError(context, error);
	}
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
