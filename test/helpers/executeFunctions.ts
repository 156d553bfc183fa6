import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

/** What a test sets of the stand-in; everything else has a plain default. */
export interface ExecuteFunctionsOptions {
	/** The node's name in the workflow, as errors and dead letters show it. */
	name?: string;
	type?: string;
	parameters?: Record<string, unknown>;
	items?: INodeExecutionData[];
	continueOnFail?: boolean;
	workflow?: { id: string; name: string };
	executionId?: string;
	instanceBaseUrl?: string;
	/** The node the items came from, as getInputSourceData answers it; none by default. */
	previousNode?: string;
	/** A credential's data by its type; a type without one is an error, as in n8n. */
	credentials?: (type: string) => unknown;
	helpers?: Partial<IDataObject>;
	/** A parameter's value for an item, when the test evaluates it itself (as n8n would an expression). */
	parameter?: (name: string, itemIndex: number, fallback?: unknown) => unknown;
}

/**
 * n8n's IExecuteFunctions as far as the nodes use it, as n8n's own node tests stand it in: the
 * node and its parameters (a dotted name reads a nested one, as in n8n), the items, Continue On
 * Fail, the workflow, the execution, credentials. getNodeParameter and getCredentials are mocks,
 * so a test can ask what was read.
 */
export function executeFunctions(options: ExecuteFunctionsOptions = {}): IExecuteFunctions {
	const parameters = options.parameters ?? {};
	const node = {
		id: 'n1',
		name: options.name ?? 'Node',
		type: options.type ?? 'test',
		typeVersion: 1,
		position: [0, 0],
		parameters,
	};
	const workflow = options.workflow ?? { id: 'wf-test', name: 'Test' };
	const parameter =
		options.parameter ??
		((name: string, _itemIndex: number, fallback?: unknown) => {
			const value = name
				.split('.')
				.reduce<unknown>(
					(v, part) => (v as Record<string, unknown> | undefined)?.[part],
					parameters,
				);
			return value === undefined ? fallback : value;
		});
	return {
		getNode: () => node,
		getInputData: () => options.items ?? [],
		getWorkflow: () => ({ ...workflow, active: false }),
		getExecutionId: () => options.executionId ?? 'exec-test',
		getInstanceBaseUrl: () => options.instanceBaseUrl ?? 'http://localhost:5678/',
		getInputSourceData: () =>
			options.previousNode === undefined ? undefined : { previousNode: options.previousNode },
		continueOnFail: () => options.continueOnFail ?? false,
		getNodeParameter: jest.fn(parameter),
		getCredentials: jest.fn(async (type: string) => {
			const credential = options.credentials?.(type);
			if (!credential) throw new Error(`no ${type} credential in this test`);
			return credential;
		}),
		helpers: options.helpers ?? {},
	} as unknown as IExecuteFunctions;
}
