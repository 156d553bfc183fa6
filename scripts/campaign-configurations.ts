import { randomUUID } from 'node:crypto';
import type { WorkflowFile } from '../dev/harness/n8n';
import { packageNode } from '../dev/workflows';

/**
 * The configurations the chaos campaign puts its leads through, in one n8n: the worked example
 * as users build it. Leads are spread over three copies of the lead workflow, one per error
 * workflow a user may name (the bundled Error handler, their own that only posts to a chat,
 * none); a share of them waits past n8n's offload threshold (a Wait that n8n saves and resumes
 * with new hooks) and a share calls a sub-workflow that claims the lead again, under its own
 * consumer. Each lead must still end done once or in one open letter with one alert.
 */
export type ErrorWorkflowConfig = 'bundled' | 'own' | 'none';

export interface LeadFlow {
	config: ErrorWorkflowConfig;
	id: string;
	/** Its Lead Form's webhook path. */
	path: string;
}

/** The bundled worked example first: alone, it is the campaign without configurations. */
export const LEAD_FLOWS: LeadFlow[] = [
	{ config: 'bundled', id: 'relLeadRouting01', path: 'lead-form' },
	{ config: 'own', id: 'relLeadRoutingOwn', path: 'lead-form-own' },
	{ config: 'none', id: 'relLeadRoutingNone', path: 'lead-form-none' },
];

/** The user's own error workflow: an Error Trigger that posts to the team chat (the demo's /chat). */
export const CHAT_WORKFLOW = 'relCampaignChat';
/** The sub-workflow a share of leads calls: it claims the lead under its own consumer. */
export const LINES_WORKFLOW = 'relLeadLines';
export const LINES_CONSUMER = 'lead-lines';
/** Past n8n's offload threshold (65 s): the run is saved as waiting and resumed with new hooks. */
export const WAIT_SECONDS = 70;

export interface ConfigurationShares {
	/** Share of leads that wait WAIT_SECONDS after they were received. */
	wait: number;
	/** Share of leads that call the sub-workflow that claims. */
	sub: number;
}

/** What the campaign ran, for its JSON line. */
export function configurationNames(shares: ConfigurationShares): string[] {
	return [
		'error workflow: the bundled Error handler',
		"error workflow: the user's own (a chat post)",
		'error workflow: none',
		...(shares.wait > 0 ? [`a Wait of ${WAIT_SECONDS} s (${shares.wait * 100}% of leads)`] : []),
		...(shares.sub > 0 ? [`a sub-workflow that claims (${shares.sub * 100}% of leads)`] : []),
	];
}

type Node = { name: string; type: string; parameters: Record<string, unknown> } & Record<
	string,
	unknown
>;
type Connections = Record<
	string,
	{ main: Array<Array<{ node: string; type: string; index: number }>> }
>;

const to = (node: string) => ({ node, type: 'main', index: 0 });

/** An If on a flag of the lead's body (true: output 0). */
const ifFlag = (name: string, flag: string, position: [number, number]): Node => ({
	id: randomUUID(),
	name,
	type: 'n8n-nodes-base.if',
	typeVersion: 1,
	position,
	parameters: {
		conditions: { boolean: [{ value1: `={{ !!$json.body.${flag} }}`, value2: true }] },
	},
});

/**
 * The lead workflow with the configurations' branches: after Received, a lead flagged `wait`
 * passes a Wait of WAIT_SECONDS; after Lead (where a replay joins too), a lead flagged `sub` also
 * calls the sub-workflow that claims it.
 */
function withBranches(lead: WorkflowFile, shares: ConfigurationShares): WorkflowFile {
	const nodes = [...(lead.nodes as Node[])];
	const connections = structuredClone(lead.connections) as Connections;
	if (shares.wait > 0) {
		nodes.push(ifFlag('Wait?', 'wait', [440, -300]), {
			id: randomUUID(),
			name: 'Wait for the Sales Desk',
			type: 'n8n-nodes-base.wait',
			typeVersion: 1.1,
			position: [560, -300],
			webhookId: randomUUID(),
			parameters: { amount: WAIT_SECONDS, unit: 'seconds' },
		});
		connections['Received'] = { main: [[to('Wait?')]] };
		connections['Wait?'] = { main: [[to('Wait for the Sales Desk')], [to('Lead')]] };
		connections['Wait for the Sales Desk'] = { main: [[to('Lead')]] };
	}
	if (shares.sub > 0) {
		nodes.push(ifFlag('Lines?', 'sub', [880, -300]), {
			id: randomUUID(),
			name: 'Book Lines',
			type: 'n8n-nodes-base.executeWorkflow',
			typeVersion: 1,
			position: [1100, -300],
			parameters: { source: 'database', workflowId: LINES_WORKFLOW, options: {} },
		});
		connections['Lead'].main[0].push(to('Lines?'));
		connections['Lines?'] = { main: [[to('Book Lines')]] };
	}
	return { ...lead, nodes, connections };
}

/** A copy of the lead workflow that names another error workflow (or none), on its own path. */
function copyFor(lead: WorkflowFile, flow: LeadFlow): WorkflowFile {
	const nodes = (structuredClone(lead.nodes) as Node[]).map((node) =>
		node.type === 'n8n-nodes-base.webhook'
			? { ...node, webhookId: randomUUID(), parameters: { ...node.parameters, path: flow.path } }
			: node,
	);
	const settings = { ...(lead.settings as Record<string, unknown>) };
	if (flow.config === 'own') settings.errorWorkflow = CHAT_WORKFLOW;
	else if (flow.config === 'none') delete settings.errorWorkflow;
	return {
		...lead,
		id: flow.id,
		name: `${lead.name} (${flow.config === 'own' ? 'own error workflow' : 'no error workflow'})`,
		nodes,
		connections: structuredClone(lead.connections),
		settings,
		versionId: randomUUID(),
	};
}

/** The user's own error workflow: it posts the failure to the chat, and does nothing else. */
function chatWorkflow(demoUrl: string): WorkflowFile {
	return {
		id: CHAT_WORKFLOW,
		name: 'Campaign: failures to the team chat',
		nodes: [
			{
				id: randomUUID(),
				name: 'Error Trigger',
				type: 'n8n-nodes-base.errorTrigger',
				typeVersion: 1,
				position: [0, 0],
				parameters: {},
			},
			{
				id: randomUUID(),
				name: 'Post to Chat',
				type: 'n8n-nodes-base.httpRequest',
				typeVersion: 4.2,
				position: [260, 0],
				parameters: {
					method: 'POST',
					url: `${demoUrl}/chat`,
					sendBody: true,
					specifyBody: 'json',
					jsonBody:
						'={{ JSON.stringify({ text: $json.workflow.name + " failed: " + ($json.execution?.error?.message ?? "") }) }}',
					options: {},
				},
			},
		],
		connections: { 'Error Trigger': { main: [[to('Post to Chat')]] } },
		active: false,
		settings: { executionOrder: 'v1' },
		pinData: {},
		versionId: randomUUID(),
	};
}

/** The sub-workflow: claims the lead under its own consumer, packs its lines a moment, done. */
function linesWorkflow(): WorkflowFile {
	return {
		id: LINES_WORKFLOW,
		name: 'Campaign: book the lead lines (a sub-workflow that claims)',
		nodes: [
			{
				id: randomUUID(),
				name: 'Lines Entry',
				type: 'n8n-nodes-base.executeWorkflowTrigger',
				typeVersion: 1,
				position: [0, 0],
				parameters: {},
			},
			{
				...packageNode('eventDedupe', 'Claim Lines', {
					operation: 'claim',
					eventId: '={{ $json.body.submissionId }}',
					consumer: LINES_CONSUMER,
				}),
				typeVersion: 2,
			},
			{
				id: randomUUID(),
				name: 'Pack Lines',
				type: 'n8n-nodes-base.wait',
				typeVersion: 1.1,
				position: [520, 0],
				webhookId: randomUUID(),
				parameters: { amount: 2, unit: 'seconds' },
			},
			{
				id: randomUUID(),
				name: 'Lines Booked',
				type: 'n8n-nodes-base.noOp',
				typeVersion: 1,
				position: [780, 0],
				parameters: {},
			},
		],
		connections: {
			'Lines Entry': { main: [[to('Claim Lines')]] },
			'Claim Lines': { main: [[to('Pack Lines')]] },
			'Pack Lines': { main: [[to('Lines Booked')]] },
		},
		active: false,
		settings: { executionOrder: 'v1' },
		pinData: {},
		versionId: randomUUID(),
	};
}

/**
 * The workflows of the configurations: the lead workflow with its branches, its two copies (the
 * user's own error workflow, none), the chat workflow and the sub-workflow. To be imported with
 * the bundled workflows, in place of the lead workflow, and all of them published.
 */
export function configurationWorkflows(
	lead: WorkflowFile,
	demoUrl: string,
	shares: ConfigurationShares,
): WorkflowFile[] {
	const branched = withBranches(lead, shares);
	return [
		branched,
		...LEAD_FLOWS.slice(1).map((flow) => copyFor(branched, flow)),
		chatWorkflow(demoUrl),
		linesWorkflow(),
	];
}
