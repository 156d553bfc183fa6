/**
 * `npm run campaign`: N leads (default 10,000; `--items N` or CAMPAIGN_ITEMS) through the worked
 * example, the bundled workflows imported into a real n8n with the demo API as enrichment
 * service and CRM, under random faults: transient failures on every request, CRM answers lost
 * after commit, duplicate deliveries (some at the same moment, some later) and many executions
 * at once. When nothing is in flight any more it reads the destinations (the CRM's contacts and
 * effect log, the dead-letter store) and counts every lead as done, parked, lost or duplicated.
 * Exits non-zero when a lead is lost or an effect happened twice.
 *
 * `--crashes N` kills n8n (SIGKILL) and restarts it N times while the leads are posted; senders
 * deliver again only when they did not get a 2xx. Every lead must still end done once or parked.
 *
 * `--chaos` adds n8n's execution lifecycle (stops, a workflow timeout, n8n killed twice in a row,
 * errors whose text says "crashed"), turns Event Dedupe's Check Order on (a lead's redelivery
 * after a failed run carries its own version again), puts the leads through the configurations
 * users build (campaign-configurations.ts: three copies of the lead workflow naming the bundled
 * Error handler, the user's own chat-only error workflow, or none; 5% of leads waiting 70 s, past
 * n8n's offload threshold; 10% calling a sub-workflow that claims them again) and, once everything
 * settled, a replay
 * phase: the cause is fixed, every open letter of a lead not done is replayed through the bundled
 * Replay with one poison among them, and each letter must end replayed (its lead upserted once)
 * or back in new with its reason, none left taken.
 *
 * `--queue` runs n8n in queue mode: the main takes the webhooks and `--workers N` (default 2)
 * `n8n worker` processes run the executions, on n8n's own database in Postgres and a Bull queue
 * on Redis. A crash then kills a worker (SIGKILL) and starts it again, and with `--chaos` a
 * worker is also drained (SIGTERM: it cancels what it still runs after its shutdown timeout).
 *
 * Parked leads are meaningful: a small share of leads carry a local phone number, which the CRM
 * rejects with 422 (a permanent failure, parked at once); the rest of the parked ones are leads
 * whose transient faults outlasted the step's attempts.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { Client } from 'pg';
import { type CrmEffect, DemoApi } from '../demo/api';
import { installN8n, type N8nInstall, packPackage } from '../dev/harness/install';
import { type N8nProcess, startN8n, type WorkflowFile } from '../dev/harness/n8n';
import { DEFAULT_N8N_VERSIONS } from '../dev/harness/paths';
import {
	clientConfig,
	createDatabase,
	dropDatabase,
	ensurePostgres,
	type PgSettings,
	queryServer,
} from '../dev/harness/postgres';
import {
	deleteRedisKeys,
	type N8nWorker,
	queuedExecutionIds,
	queueModeEnv,
	type QueueRedis,
} from '../dev/harness/queue';
import { bundledToActivate, bundledWorkflows } from '../dev/bundled';
import { storeCredential } from '../dev/workflows';
import { updateDeadLetterStatuses } from '../lib/deadletter';
import { Store } from '../lib/store';
import {
	CHAT_WORKFLOW,
	type ConfigurationShares,
	configurationNames,
	configurationWorkflows,
	LEAD_FLOWS,
	type LeadFlow,
	LINES_CONSUMER,
	LINES_WORKFLOW,
} from './campaign-configurations';

const LEAD_WORKFLOW = 'relLeadRouting01';
const CONSUMER = 'lead-routing';
/** The consumers whose claims are a lead's: the lead workflow's, and the sub-workflow's. */
const CONSUMERS = [CONSUMER, LINES_CONSUMER];
const UPSERT_SUFFIX = ':crm-upsert';
const ENRICH_SUFFIX = ':enrich';
const OWNER_SUFFIX = ':crm-owner';
const UNFINISHED = ['new', 'running', 'waiting'];
const FINISHED = ['success', 'error', 'crashed', 'canceled', 'unknown'];

export interface CampaignOptions {
	items: number;
	install: N8nInstall;
	/** The packed package (npm pack), installed into n8n as users install it. */
	tarball: string;
	postgres: PgSettings;
	/** Share of requests to the enrichment service and the CRM that fail transiently (timeout, 503). */
	faultRate?: number;
	/** Share of CRM answers lost after the upsert was committed. */
	lostRate?: number;
	/** Share of leads with a local phone number, which the CRM rejects (422): parked. */
	localPhoneRate?: number;
	/** Share of leads delivered twice; half of them at the same moment, half later. */
	duplicateRate?: number;
	/** Webhook posts in flight at once. */
	senders?: number;
	/** Executions n8n runs at once (N8N_CONCURRENCY_PRODUCTION_LIMIT). */
	n8nConcurrency?: number;
	/** Posted but not finished: the senders wait while n8n is this far behind. */
	maxBacklog?: number;
	/** Seed of the leads and the fault draws. */
	seed?: number;
	/** Give up waiting when no execution has finished for this long (5 min; 13 with crashes). */
	stallMs?: number;
	/**
	 * A canary secret: every delivery carries it in its headers (Authorization, Cookie, X-Api-Key)
	 * and its body (a password, an API key in a note), and the demo API puts it in every answer
	 * (echoSecrets), so a caller can prove it was stored and sent nowhere.
	 */
	canary?: string;
	/**
	 * How many times n8n is killed (SIGKILL) and restarted while the leads are posted. A sender
	 * delivers again only when it did not get a 2xx, as most webhook senders do.
	 */
	crashes?: number;
	/**
	 * How many running executions of the lead workflow the campaign stops through n8n's API
	 * (`POST /rest/executions/:id/stop`, as the Stop button does) while the leads are posted.
	 */
	stops?: number;
	/** Each crash is followed, once n8n is back, by a second one: n8n reports the first's executions again. */
	crashesTwice?: boolean;
	/**
	 * Queue mode: the main takes the webhooks and this many `n8n worker` processes run the
	 * executions (n8n's data in a database of its own on the campaign's Postgres server, its queue
	 * on Redis). A crash then kills a worker, in turn, and starts it again; the main stays up.
	 */
	queue?: { workers: number; redis?: { host: string; port: number } };
	/**
	 * Queue mode: how many times a worker is drained (SIGTERM, as a deploy or a scale-down stops
	 * it) and started again while the leads are posted. A worker gives its running executions
	 * `drainSeconds` to finish, then cancels them (n8n 2.x), which runs no error workflow.
	 */
	drains?: number;
	/** A worker's shutdown timeout when drained (its N8N_GRACEFUL_SHUTDOWN_TIMEOUT; 5 s). */
	drainSeconds?: number;
	/**
	 * The configurations users build (campaign-configurations.ts): leads spread over the three
	 * error workflows a workflow may name (the bundled Error handler, the user's own chat post,
	 * none), a share waiting past n8n's offload threshold, a share calling a sub-workflow that
	 * claims. Without it, every lead goes through the bundled worked example alone.
	 */
	configurations?: ConfigurationShares;
	/** Share of CRM writes answered 502 `{"error":"Upstream service crashed"}` (nothing committed). */
	crashTextRate?: number;
	/** The lead workflow's timeout (its Timeout Workflow setting): a slow execution is cancelled. */
	executionTimeoutSeconds?: number;
	/**
	 * Event Dedupe's Check Order on, per lead (entity: its email; version: a number sent with every
	 * delivery of the lead): a delivery again after a failed run meets the version its own first
	 * delivery recorded, and must still be let through, never dropped as a duplicate.
	 */
	checkOrder?: boolean;
	/**
	 * After the counts: the operator fixes the cause (the CRM accepts local numbers from now on),
	 * asks for every open letter of a lead not done to be replayed, and the bundled Replay runs
	 * them, with one poison among them (a lead the CRM still refuses). Counted in `replay`.
	 */
	replay?: boolean;
	/** How long the replay phase waits for its letters to settle (15 min: one hold of a take). */
	replayWaitMs?: number;
	/**
	 * On a finding (a lead lost or duplicated, work left behind, not settled), keep the store's
	 * schema and n8n's queue-mode database to inspect, as the command line does; tests drop them.
	 */
	keepFindings?: boolean;
	/** Called once the counts are taken, before the store's schema is dropped. */
	inspect?: (view: { admin: Client; schema: string; demo: DemoApi }) => Promise<void>;
	log?: (line: string) => void;
}

export interface CampaignResult {
	items: number;
	done: number;
	parked: number;
	lost: number;
	duplicated: number;
	/** Done (in the CRM once) and also parked: an unknown outcome the node could not settle. */
	doneAndParked: number;
	/** Those by the step and class of their dead letter. */
	doneAndParkedBy: Record<string, number>;
	/** Local-phone leads that ended in the CRM although the CRM rejects them (must be 0). */
	misrouted: number;
	/** Effects at the CRM that belong to no lead of the campaign (must be 0). */
	strayEffects: number;
	/** Leads with a local phone number: the CRM rejects each, so each must end parked. */
	localPhones: number;
	/** Webhooks posted: every lead once, the duplicates again. */
	deliveries: number;
	executions: {
		finished: number;
		unfinished: number;
		byStatus: Record<string, number>;
		/**
		 * Queue mode: executions n8n's database still has as new or running while its queue no
		 * longer holds them (they died with a killed worker). n8n's queue recovery marks such
		 * executions crashed only when it finds other jobs queued, so an idle queue keeps them.
		 */
		lostWithWorkers?: number;
	};
	parkedBy: Record<string, number>;
	faults: DemoApi['stats'];
	wallMs: number;
	/** What the campaign found about each lost or duplicated lead, for the report. */
	findings: string[];
	/** The trail of a few leads that are done and also parked, for the report. */
	notes: string[];
	/** True when every execution finished before the counts were taken. */
	settled: boolean;
	/** The chaos counts: what the lifecycle faults left behind that nobody will settle. */
	chaos: ChaosCounts;
	/** The replay phase's counts, when it ran. */
	replay?: ReplayCounts;
}

/**
 * The replay phase: every letter asked for must end `replayed` with its lead's upsert taken once,
 * or back in `new` with the reason its re-run failed (the poison always); none may stay taken.
 */
export interface ReplayCounts {
	/** Letters asked to be replayed (every open `new` letter of a lead whose work is not done). */
	requested: number;
	/** Of those, closed `replayed`. */
	replayed: number;
	/** Back in `new` with a reason (the poison, and any whose re-run met the faults again). */
	failedAgain: number;
	/** Still `replay_requested` or `being_fixed` when the phase gave up waiting (must be 0). */
	stuck: number;
	/**
	 * Closed `replayed`: its own step passed on the re-run, a later step failed and parked the
	 * lead in a letter of its own (open). The item is in that letter now.
	 */
	failedLater: number;
	/**
	 * Closed `replayed` while the lead's upsert took effect other than once and no open letter
	 * names the lead (must be 0).
	 */
	replayedNotDone: number;
	/** Leads whose upsert took effect more than once, counted after the replays (must be 0). */
	duplicated: number;
	/** The poison ended back in `new`, its reason recorded, and never reached the CRM. */
	poisonEndedNew: boolean;
	/** Replay runs (its webhook) the phase called. */
	runs: number;
	wallMs: number;
	/** A few of each problem, for the report. */
	details: string[];
}

export interface ChaosCounts {
	/** Executions the campaign stopped through n8n's API (of those it asked to stop). */
	stopped: number;
	stopsAsked: number;
	/** Times n8n (in queue mode: a worker) was killed (a crash followed by a second one counts two). */
	kills: number;
	/** Queue mode: times a worker was drained (SIGTERM) and started again. */
	drains: number;
	/** Queue mode: the workers that ran the executions (0: n8n's regular mode). */
	workers: number;
	/**
	 * Times n8n exited on its own and was started again, as a supervisor (systemd, Docker's
	 * restart policy) would: n8n 2.40.7 was seen exiting on a TypeError in its own statistics
	 * hooks while it recovered executions that had never started.
	 */
	selfExits: number;
	/** Open dead letters of leads whose work is done (claim done, upserted exactly once). */
	openLettersForDoneWork: number;
	/**
	 * Open `unknown_outcome` letters of done leads whose write record stayed `unknown`: the answer
	 * was lost and every later attempt failed, so only a person checking the target can tell.
	 * Reported, not failed on: it is what the design asks for.
	 */
	unknownOutcomes: number;
	/** Alerts about a lead's upsert or event that had already taken effect when the alert came. */
	alertsForDoneItems: number;
	/** Claims still in progress, and write records in progress or unknown with no open letter. */
	stuckRecords: number;
	/**
	 * Letters waiting for a person (`new`) that no alert named: a person learns of them from the
	 * console or the daily digest only. Reported, not failed on: a letter whose run died before its
	 * Alert reaches one through Recover two minutes after its last change, which may be after the
	 * count.
	 */
	lettersNotAlerted: number;
	/** The most open letters any one lead has (one item, one letter: must be 1 at most). */
	lettersPerItemMax: number;
	/** The most alerts that named any one lead before the replay phase (must be 1 at most). */
	alertsPerItemMax: number;
	/** The configurations the leads went through, by name. */
	configurations: string[];
	/** A few of each, for the report. */
	details: string[];
}

interface Lead {
	submissionId: string;
	email: string;
	name: string;
	phone: string;
	local: boolean;
	/** Check Order's entity version, the same on every delivery of the lead. */
	version?: number;
	/** The copy of the lead workflow it is posted to (its error workflow's configuration). */
	flow: LeadFlow;
	/** It waits past n8n's offload threshold; it calls the sub-workflow that claims. */
	wait?: boolean;
	sub?: boolean;
}

/** mulberry32: a small seeded generator, so a campaign's leads and faults can be drawn again. */
function seeded(seed: number): () => number {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The leads, and the order they are posted in: one unit is posted at once (a pair: a duplicate at the same moment). */
function plan(
	items: number,
	tag: string,
	random: () => number,
	localPhoneRate: number,
	duplicateRate: number,
): { leads: Lead[]; units: Lead[][]; sameMoment: number; later: number } {
	const digits = (n: number): string =>
		Array.from({ length: n }, () => Math.floor(random() * 10)).join('');
	const leads: Lead[] = Array.from({ length: items }, (_, i) => {
		const local = random() < localPhoneRate;
		return {
			submissionId: `camp-${tag}-${i}`,
			email: `lead${i}.${tag}@company${i % 97}.example`,
			name: `Lead ${i}`,
			phone: local ? `0151 ${digits(7)}` : `+49151${digits(7)}`,
			local,
			flow: LEAD_FLOWS[0],
		};
	});
	// A later duplicate is posted a few hundred positions after its lead: the sender did not hear
	// back in time and delivers again, usually after the first copy has finished.
	const placed: Array<{ at: number; unit: Lead[] }> = [];
	let sameMoment = 0;
	let later = 0;
	leads.forEach((lead, i) => {
		const duplicate = random() < duplicateRate;
		if (duplicate && random() < 0.5) {
			sameMoment++;
			placed.push({ at: i, unit: [lead, lead] });
			return;
		}
		placed.push({ at: i, unit: [lead] });
		if (duplicate) {
			later++;
			placed.push({ at: i + 20 + random() * 400, unit: [lead] });
		}
	});
	placed.sort((a, b) => a.at - b.at);
	return { leads, units: placed.map((p) => p.unit), sameMoment, later };
}

/** How many executions match a filter, from n8n's own execution list (its count, not a page). */
async function countExecutions(n8n: N8nProcess, filter: Record<string, unknown>): Promise<number> {
	const query = encodeURIComponent(JSON.stringify(filter));
	const data = await n8n.api.rest<{ count: number }>('GET', `/executions?filter=${query}&limit=1`);
	return data.count;
}

/**
 * Posts one delivery as a webhook sender does: until n8n accepts it (200), a few times; while n8n
 * is being restarted (`down`), it waits for it first.
 */
async function deliver(
	n8n: N8nProcess,
	lead: Lead,
	canary?: string,
	down: () => Promise<void> | undefined = () => undefined,
): Promise<void> {
	const body = {
		submissionId: lead.submissionId,
		email: lead.email,
		name: lead.name,
		phone: lead.phone,
		...(lead.version !== undefined ? { version: lead.version } : {}),
		...(lead.wait ? { wait: true } : {}),
		...(lead.sub ? { sub: true } : {}),
		...(canary ? { password: canary, note: `form api_key=${canary}` } : {}),
	};
	const headers: Record<string, string> = canary
		? {
				authorization: `Bearer ${canary}`,
				cookie: `session=${canary}`,
				'x-api-key': canary,
			}
		: {};
	let last = '';
	for (let attempt = 1; attempt <= 10; attempt++) {
		await down();
		try {
			const response = await n8n.api.webhook(lead.flow.path, body, headers);
			if (response.status === 200) return;
			last = `${response.status} ${JSON.stringify(response.body).slice(0, 200)}`;
		} catch (error) {
			last = error instanceof Error ? error.message : String(error);
		}
		await sleep(500 * attempt);
	}
	throw new Error(
		`n8n did not accept the webhook of ${lead.submissionId} after 10 attempts: ${last}`,
	);
}

export async function runCampaign(options: CampaignOptions): Promise<CampaignResult> {
	const started = Date.now();
	const say = options.log ?? ((line: string) => void process.stdout.write(`${line}\n`));
	const items = options.items;
	const faultRate = options.faultRate ?? 0.3;
	const lostRate = options.lostRate ?? 0.05;
	const localPhoneRate = options.localPhoneRate ?? 0.01;
	const duplicateRate = options.duplicateRate ?? 0.1;
	const senders = options.senders ?? 32;
	const n8nConcurrency = options.n8nConcurrency ?? 50;
	const maxBacklog = options.maxBacklog ?? 300;
	const seed = options.seed ?? randomBytes(4).readUInt32LE(0);
	const crashes = options.crashes ?? 0;
	const stops = options.stops ?? 0;
	const drains = options.queue ? (options.drains ?? 0) : 0;
	let kills = 0;
	let drained = 0;
	let stopped = 0;
	let selfExits = 0;
	// A crash can kill a Recover run while it holds the items it took: they are taken again once
	// its hold (the bundled Recover's 600 s) ends, so a campaign with crashes waits past that.
	const stallMs = options.stallMs ?? (crashes > 0 ? 780_000 : 300_000);
	const random = seeded(seed);
	const tag = randomBytes(3).toString('hex');
	const schema = `campaign_${tag}_${process.pid}`;
	const { leads, units, sameMoment, later } = plan(
		items,
		tag,
		random,
		localPhoneRate,
		duplicateRate,
	);
	const deliveries = units.reduce((sum, unit) => sum + unit.length, 0);
	if (options.checkOrder)
		for (const lead of leads) lead.version = 1 + Math.floor(random() * 1_000_000);
	const shares = options.configurations;
	const leadFlows = shares ? LEAD_FLOWS : [LEAD_FLOWS[0]];
	const leadIds = leadFlows.map((flow) => flow.id);
	if (shares)
		leads.forEach((lead, i) => {
			lead.flow = leadFlows[i % leadFlows.length];
			lead.wait = random() < shares.wait;
			lead.sub = random() < shares.sub;
		});
	/** How many executions of the lead workflows have a status among `status`. */
	const leadExecutions = async (n8n: N8nProcess, status: string[]): Promise<number> => {
		let total = 0;
		for (const workflowId of leadIds) total += await countExecutions(n8n, { workflowId, status });
		return total;
	};

	const demo = await new DemoApi(seeded(seed ^ 0x5eed)).start();
	// Every request to the enrichment service and the CRM may fail transiently: an enrichment call
	// hangs past the node's 2 s timeout, a CRM write answers 503. Some CRM answers are lost after
	// the upsert was committed.
	demo.faults = {
		...demo.faults,
		rejectLocalPhones: true,
		enrichTimeoutRate: faultRate,
		enrichDelayMs: 3_000,
		crmUnavailableRate: faultRate,
		crmLostRate: lostRate,
		crmCrashTextRate: options.crashTextRate,
		echoSecrets: options.canary,
	};
	const admin = new Client(clientConfig(options.postgres));
	await admin.connect();
	// Queue mode: n8n's own data in a database of this run, its queue and cache under a prefix of
	// this run on the shared Redis.
	const queue = options.queue
		? {
				database: `n8n_campaign_${tag}_${process.pid}`,
				redis: {
					host: options.queue.redis?.host ?? '127.0.0.1',
					port: options.queue.redis?.port ?? 6379,
					prefix: `reliability_campaign_${tag}`,
				} satisfies QueueRedis,
			}
		: undefined;
	let queueDatabase: PgSettings | undefined;
	const workers: N8nWorker[] = [];
	let n8n: N8nProcess | undefined;
	/** A finding to explain: n8n's folder, the store's schema and n8n's database are kept. */
	let keepUserFolder = false;
	try {
		say(
			`campaign: ${items} leads through the worked example in n8n ${options.install.version} (seed ${seed}, store schema ${schema})`,
		);
		say(
			`  faults: ${pct(faultRate)} of enrichment calls time out and ${pct(faultRate)} of CRM writes answer 503, ${pct(lostRate)} of CRM answers lost after commit, ${pct(localPhoneRate)} of leads with a local phone (CRM 422)`,
		);
		say(
			`  deliveries: ${deliveries} webhooks (${sameMoment} leads posted twice at the same moment, ${later} again later), ${senders} senders, n8n runs up to ${n8nConcurrency} executions at once`,
		);
		if (crashes > 0)
			say(
				options.queue
					? `  crashes: a worker (in turn) killed with SIGKILL and restarted ${crashes} times while the leads are posted${options.crashesTwice ? ', each time twice in a row' : ''}`
					: `  crashes: n8n killed with SIGKILL and restarted ${crashes} times while the leads are posted${options.crashesTwice ? ', each time twice in a row (so n8n reports the crashed executions again)' : ''}`,
			);
		if (stops > 0 || options.crashTextRate || options.executionTimeoutSeconds)
			say(
				`  lifecycle: ${stops} running executions stopped through n8n's API, ${pct(options.crashTextRate ?? 0)} of CRM writes answer 502 "Upstream service crashed"${options.executionTimeoutSeconds ? `, the lead workflow times out after ${options.executionTimeoutSeconds} s` : ''}`,
			);
		if (options.queue)
			say(
				`  queue mode: the main takes the webhooks, ${options.queue.workers} workers run the executions${crashes > 0 ? `; a crash kills a worker (SIGKILL), the main stays up` : ''}${drains > 0 ? `; ${drains} times a worker is drained (SIGTERM, ${options.drainSeconds ?? 5} s to finish) and started again` : ''}`,
			);
		if (options.checkOrder)
			say(
				`  Check Order: on at the lead workflow's Event Dedupe (entity: the email; version: sent with every delivery of the lead)`,
			);
		if (shares) say(`  configurations: ${configurationNames(shares).join('; ')}`);
		const workflows = bundledWorkflows(demo.url).flatMap((w) =>
			w.id !== LEAD_WORKFLOW
				? [w]
				: shares
					? configurationWorkflows(leadWorkflowFor(w, options), demo.url, shares)
					: [leadWorkflowFor(w, options)],
		);
		const major = Number(options.install.version.split('.')[0]);
		if (queue) queueDatabase = await createDatabase(options.postgres, queue.database);
		n8n = await startN8n({
			install: options.install,
			tarball: options.tarball,
			credentials: [storeCredential(schema, options.postgres)],
			workflows,
			activate: [
				...bundledToActivate(major),
				...leadIds.slice(1),
				// 2.x runs an error workflow or a sub-workflow only once it is published.
				...(shares && major >= 2 ? [CHAT_WORKFLOW, LINES_WORKFLOW] : []),
			],
			env: {
				N8N_CONCURRENCY_PRODUCTION_LIMIT: String(n8nConcurrency),
				// Every execution is kept, so "every execution finished" can be counted.
				EXECUTIONS_DATA_PRUNE: 'false',
				EXECUTIONS_DATA_PRUNE_MAX_COUNT: '0',
				...(queue && queueDatabase ? queueModeEnv(queueDatabase, queue.redis) : {}),
			},
		});
		const instance = n8n;
		// One after the other: two n8n boots at once on a small machine only take longer. The
		// executions n8n runs at once are shared among the workers.
		for (let k = 0; k < (options.queue?.workers ?? 0); k++)
			workers.push(
				await instance.startWorker(`worker-${k + 1}`, {
					concurrency: Math.max(1, Math.ceil(n8nConcurrency / options.queue!.workers)),
					env: { N8N_GRACEFUL_SHUTDOWN_TIMEOUT: String(options.drainSeconds ?? 5) },
				}),
			);
		say(
			`  n8n started after ${Math.round((Date.now() - started) / 1000)} s (${instance.baseUrl}, log ${instance.logFile})`,
		);

		// Progress: how many executions of the lead workflow have finished, polled in the background.
		let finished = 0;
		let lastProgressAt = Date.now();
		let posted = 0;
		let polling = true;
		const poller = (async () => {
			let lastReport = Date.now();
			while (polling) {
				const now = await leadExecutions(instance, FINISHED).catch(() => finished);
				if (now !== finished) lastProgressAt = Date.now();
				finished = now;
				if (Date.now() - lastReport >= 15_000) {
					lastReport = Date.now();
					say(
						`  [${Math.round((Date.now() - started) / 1000)} s] posted ${posted}/${deliveries}, finished ${finished}, CRM contacts ${demo.contacts.length}`,
					);
				}
				await sleep(1_000);
			}
		})();

		// The crash fault: at evenly spaced points of the posting, n8n dies and comes back (in queue
		// mode a worker, in turn: the main, which only takes webhooks, stays up).
		let restarting: Promise<void> | undefined;
		/** Workers the crash or drain fault is restarting: the supervisor leaves them alone. */
		const handled = new Set<N8nWorker>();
		const crashPoints = Array.from({ length: crashes }, (_, k) =>
			Math.floor((deliveries * (k + 1)) / (crashes + 1)),
		);
		const crasher = (async () => {
			for (const [k, point] of crashPoints.entries()) {
				while (posted < point) await sleep(200);
				const worker = workers[k % Math.max(1, workers.length)];
				if (worker) {
					handled.add(worker);
					for (let time = 0; time < (options.crashesTwice ? 2 : 1); time++) {
						say(
							`  [${Math.round((Date.now() - started) / 1000)} s] killing ${worker.name} (SIGKILL) after ${posted} deliveries${time > 0 ? ', again right after its restart' : ''}`,
						);
						await worker.kill();
						kills++;
						await worker.start();
						say(`  [${Math.round((Date.now() - started) / 1000)} s] ${worker.name} is back`);
						if (options.crashesTwice && time === 0) await sleep(3_000);
					}
					handled.delete(worker);
					lastProgressAt = Date.now();
					continue;
				}
				while (restarting) await restarting;
				restarting = (async () => {
					for (let time = 0; time < (options.crashesTwice ? 2 : 1); time++) {
						say(
							`  [${Math.round((Date.now() - started) / 1000)} s] killing n8n (SIGKILL) after ${posted} deliveries${time > 0 ? ', again right after its restart' : ''}`,
						);
						await instance.kill();
						kills++;
						await instance.start();
						await instance.api.login();
						say(`  [${Math.round((Date.now() - started) / 1000)} s] n8n is back`);
						// Long enough for n8n to report the crashed executions and start their error
						// workflow, short enough that the next crash finds some of that still running.
						if (options.crashesTwice && time === 0) await sleep(3_000);
					}
				})();
				await restarting;
				restarting = undefined;
				lastProgressAt = Date.now();
			}
		})();

		// The drain fault (queue mode): at evenly spaced points, between the crashes, a worker is
		// stopped as a deploy or a scale-down stops it and started again.
		const drainPoints = Array.from({ length: drains }, (_, k) =>
			Math.floor((deliveries * (k + 0.75)) / drains),
		);
		const drainer = (async () => {
			for (const [k, point] of drainPoints.entries()) {
				while (posted < point) await sleep(200);
				const worker = workers[(k + 1) % workers.length];
				while (handled.has(worker)) await sleep(200);
				handled.add(worker);
				say(
					`  [${Math.round((Date.now() - started) / 1000)} s] draining ${worker.name} (SIGTERM) after ${posted} deliveries`,
				);
				await worker.stop(((options.drainSeconds ?? 5) + 30) * 1000);
				drained++;
				await worker.start();
				say(`  [${Math.round((Date.now() - started) / 1000)} s] ${worker.name} is back`);
				handled.delete(worker);
				lastProgressAt = Date.now();
			}
		})();

		// The supervisor: n8n that exits on its own is started again (and counted), as systemd or a
		// container's restart policy would; the senders wait for it like for a crash's restart.
		let supervising = true;
		const supervisor = (async () => {
			while (supervising) {
				if (!restarting && instance.exitedOnItsOwn) {
					selfExits++;
					say(
						`  [${Math.round((Date.now() - started) / 1000)} s] n8n exited on its own (see ${instance.logFile}); starting it again`,
					);
					restarting = (async () => {
						await instance.start();
						await instance.api.login();
					})();
					await restarting;
					restarting = undefined;
					lastProgressAt = Date.now();
				}
				for (const worker of workers)
					if (!handled.has(worker) && worker.exitedOnItsOwn) {
						selfExits++;
						say(
							`  [${Math.round((Date.now() - started) / 1000)} s] ${worker.name} exited on its own (see ${worker.logFile}); starting it again`,
						);
						await worker.start().catch(() => undefined);
						lastProgressAt = Date.now();
					}
				await sleep(500);
			}
		})();

		// The stop fault: at evenly spaced points, one running execution of the lead workflow is
		// stopped as the Stop button stops it.
		const stopPoints = Array.from({ length: stops }, (_, k) =>
			Math.floor((deliveries * (k + 0.5)) / stops),
		);
		const stopper = (async () => {
			for (const point of stopPoints) {
				while (posted < point) await sleep(200);
				for (let tries = 0; tries < 20; tries++) {
					await restarting;
					const filter = encodeURIComponent(
						JSON.stringify({
							workflowId: leadIds[Math.floor(random() * leadIds.length)],
							status: ['running'],
						}),
					);
					const running = await instance.api
						.rest<{ results: Array<{ id: string }> }>(
							'GET',
							`/executions?filter=${filter}&limit=20`,
						)
						.then((data) => data.results)
						.catch(() => []);
					const victim = running[Math.floor(random() * running.length)];
					if (victim) {
						const answer = await instance.api
							.rest<{ status?: string }>('POST', `/executions/${victim.id}/stop`)
							.catch(() => undefined);
						if (answer) {
							stopped++;
							break;
						}
					}
					await sleep(250);
				}
			}
		})();

		let settled = false;
		try {
			// The senders: each takes the next unit and posts it (a pair at the same moment); all wait
			// while n8n is more than maxBacklog executions behind.
			let next = 0;
			await Promise.all(
				Array.from({ length: senders }, async () => {
					while (next < units.length) {
						while (posted - finished > maxBacklog) {
							if (Date.now() - lastProgressAt > stallMs)
								throw new Error(
									`no execution finished for ${Math.round(stallMs / 1000)} s with ${posted - finished} posted and unfinished; see ${instance.logFile}`,
								);
							await sleep(200);
						}
						const unit = units[next++];
						if (!unit) return;
						await Promise.all(
							unit.map((lead) => deliver(instance, lead, options.canary, () => restarting)),
						);
						posted += unit.length;
					}
				}),
			);
			await crasher;
			await stopper;
			await drainer;
			say(
				`  all ${deliveries} deliveries accepted after ${Math.round((Date.now() - started) / 1000)} s; waiting for every execution to finish`,
			);

			// Settled: every accepted delivery has a finished execution, nothing runs or waits in n8n,
			// and no write is in progress in the store. In queue mode an execution that died with a
			// killed worker stays running in n8n's database; it is not waited for once the queue is
			// seen, twice in a row, not to hold it.
			let lostBefore = '';
			while (!settled) {
				await restarting;
				const unfinished = await countExecutions(instance, { status: UNFINISHED }).catch(
					() => undefined,
				);
				if (unfinished === undefined) {
					await sleep(2_000);
					continue;
				}
				// An unknown outcome stays in_progress with its lease ended (to be reconciled by the next
				// claim); only a live lease is a write still under way.
				const [{ open }] = (
					await admin.query<{ open: string }>(
						`SELECT count(*) AS open FROM "${schema}".idempotency_keys WHERE status = 'in_progress' AND lease_until > now()`,
					)
				).rows;
				// Claims still held (a crash's items wait for Recover) are work not yet finished.
				const [{ held }] = (
					await admin.query<{ held: string }>(
						`SELECT count(*) AS held FROM "${schema}".processed_events WHERE status = 'in_progress'`,
					)
				).rows;
				const lost =
					queue && queueDatabase
						? await lostWithWorkers(queueDatabase, queue.redis, leadIds).catch(() => undefined)
						: { all: [], lead: 0 };
				if (lost === undefined) {
					await sleep(2_000);
					continue;
				}
				const lostNow = lost.all.join(',');
				const lostSeenTwice = lostNow === lostBefore;
				lostBefore = lostNow;
				settled =
					finished + lost.lead >= deliveries &&
					unfinished - lost.all.length === 0 &&
					lostSeenTwice &&
					Number(open) === 0 &&
					Number(held) === 0;
				if (settled) break;
				if (Date.now() - lastProgressAt > stallMs) {
					say(
						`  no execution finished for ${Math.round(stallMs / 1000)} s (finished ${finished}/${deliveries}, ${unfinished} unfinished, ${open} writes in progress, ${held} claims held): counting as it stands`,
					);
					break;
				}
				await sleep(2_000);
			}
		} finally {
			polling = false;
			await poller;
			supervising = false;
			await supervisor;
		}

		const byStatus: Record<string, number> = {};
		for (const status of [...FINISHED, ...UNFINISHED]) {
			const n = await leadExecutions(instance, [status]);
			if (n > 0) byStatus[status] = n;
		}
		const unfinishedNow = await countExecutions(instance, { status: UNFINISHED });
		const lostNow =
			queue && queueDatabase
				? (await lostWithWorkers(queueDatabase, queue.redis, leadIds).catch(() => undefined))?.all
						.length
				: undefined;
		const result = await count({ leads, demo, admin, schema, n8n: instance });
		const chaos = await chaosCounts({ leads, demo, admin, schema });
		const replay = options.replay
			? await replayParked({ leads, demo, admin, schema, n8n: instance, options, say, leadIds })
			: undefined;
		await options.inspect?.({ admin, schema, demo });
		const outcome: CampaignResult = {
			...result,
			items,
			localPhones: leads.filter((lead) => lead.local).length,
			deliveries,
			executions: {
				finished,
				unfinished: unfinishedNow,
				byStatus,
				...(lostNow === undefined ? {} : { lostWithWorkers: lostNow }),
			},
			faults: { ...demo.stats },
			wallMs: Date.now() - started,
			settled,
			chaos: {
				...chaos,
				stopped,
				stopsAsked: stops,
				kills,
				selfExits,
				drains: drained,
				workers: workers.length,
				configurations: shares
					? configurationNames(shares)
					: ['error workflow: the bundled Error handler'],
			},
			replay,
		};
		keepUserFolder =
			outcome.lost > 0 ||
			outcome.duplicated > 0 ||
			!settled ||
			chaos.openLettersForDoneWork > 0 ||
			chaos.alertsForDoneItems > 0 ||
			chaos.stuckRecords > 0 ||
			chaos.lettersPerItemMax > 1 ||
			chaos.alertsPerItemMax > 1;
		return outcome;
	} catch (error) {
		keepUserFolder = true;
		throw error;
	} finally {
		for (const worker of workers) await worker.stop().catch(() => undefined);
		await n8n?.stop().catch(() => undefined);
		const keepData = keepUserFolder && options.keepFindings === true;
		if (queue) {
			if (!keepData) await dropDatabase(options.postgres, queue.database).catch(() => undefined);
			await deleteRedisKeys(queue.redis).catch(() => undefined);
		}
		await demo.stop().catch(() => undefined);
		if (keepData)
			say(
				`  the store's schema ${schema} (database ${options.postgres.database})${queue ? ` and n8n's database ${queue.database}` : ''} kept for inspection; drop them when done`,
			);
		else await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
		await admin.end().catch(() => undefined);
		if (n8n && keepUserFolder)
			say(`  n8n's user folder (its executions, its log) kept for inspection: ${n8n.userFolder}`);
		else if (n8n && !process.env.RELIABILITY_KEEP_RUNS)
			rmSync(n8n.userFolder, { recursive: true, force: true });
	}
}

type Counted = Pick<
	CampaignResult,
	| 'done'
	| 'parked'
	| 'lost'
	| 'duplicated'
	| 'doneAndParked'
	| 'doneAndParkedBy'
	| 'misrouted'
	| 'strayEffects'
	| 'parkedBy'
	| 'findings'
	| 'notes'
>;

/** Reads the destinations and puts every lead in exactly one of done, parked, lost, duplicated. */
async function count(input: {
	leads: Lead[];
	demo: DemoApi;
	admin: Client;
	schema: string;
	n8n: N8nProcess;
}): Promise<Counted> {
	const { leads, demo, admin, schema, n8n } = input;
	const byEmail = new Map(leads.map((lead) => [lead.email, lead]));
	const bySubmission = new Map(leads.map((lead) => [lead.submissionId, lead]));

	// Effects, not contacts: an upsert by e-mail leaves one contact however often it took effect.
	const effects = new Map<string, CrmEffect[]>();
	let strayEffects = 0;
	for (const effect of demo.effects) {
		const lead = byEmail.get(effect.email);
		if (!lead) {
			strayEffects++;
			continue;
		}
		effects.set(lead.submissionId, [...(effects.get(lead.submissionId) ?? []), effect]);
	}
	const inCrm = new Set(
		demo.contacts
			.map((c) => byEmail.get(c.email)?.submissionId)
			.filter((id): id is string => id !== undefined),
	);

	// Dead letters name their lead by idempotency key: <submission>:enrich, <submission>:crm-upsert,
	// <submission> (invalid at the door), or execution:<id> (the error handler, for a failed run).
	const rows = (
		await admin.query<{
			idempotency_key: string | null;
			step: string;
			error_class: string;
			error_status: number | null;
			execution_id: string | null;
		}>(
			`SELECT idempotency_key, step, error_class, error_status, execution_id FROM "${schema}".dead_letters`,
		)
	).rows;
	const parkedLeads = new Map<string, string[]>();
	const parkedBy: Record<string, number> = {};
	for (const row of rows) {
		const reason = `${row.step}: ${row.error_class}${row.error_status ? ` ${row.error_status}` : ''}`;
		const key = row.idempotency_key ?? '';
		// The owner assignment runs after the upsert: its letter is a later step's work left to a
		// person (the chaos counts weigh it), not a parked lead.
		if (key.endsWith(OWNER_SUFFIX)) continue;
		const submission =
			submissionOfKey(key) ??
			(key.startsWith('execution:')
				? await submissionOfExecution(n8n, key.slice('execution:'.length))
				: undefined) ??
			key;
		if (!bySubmission.has(submission)) continue;
		parkedLeads.set(submission, [...(parkedLeads.get(submission) ?? []), reason]);
	}

	const counted: Counted = {
		done: 0,
		parked: 0,
		lost: 0,
		duplicated: 0,
		doneAndParked: 0,
		doneAndParkedBy: {},
		misrouted: 0,
		strayEffects,
		parkedBy,
		findings: [],
		notes: [],
	};
	const lost: Lead[] = [];
	const duplicated: Lead[] = [];
	const doneAndParked: Lead[] = [];
	for (const lead of leads) {
		const taken = effects.get(lead.submissionId)?.length ?? 0;
		const parked = parkedLeads.get(lead.submissionId);
		if (taken > 1) {
			counted.duplicated++;
			duplicated.push(lead);
		} else if (inCrm.has(lead.submissionId)) {
			counted.done++;
			if (parked) {
				counted.doneAndParked++;
				doneAndParked.push(lead);
				const reason = parked[parked.length - 1];
				counted.doneAndParkedBy[reason] = (counted.doneAndParkedBy[reason] ?? 0) + 1;
			}
			if (lead.local) counted.misrouted++;
		} else if (parked) {
			counted.parked++;
			// The reason a parked lead counts under: its last step's record.
			const reason = parked[parked.length - 1];
			parkedBy[reason] = (parkedBy[reason] ?? 0) + 1;
		} else {
			counted.lost++;
			lost.push(lead);
		}
	}
	for (const lead of lost.slice(0, 10))
		counted.findings.push(`lost ${lead.submissionId}: ${await trace(admin, schema, n8n, lead)}`);
	for (const lead of doneAndParked.slice(0, 3))
		counted.notes.push(
			`done and parked ${lead.submissionId}: ${await trace(admin, schema, n8n, lead)}`,
		);
	for (const lead of duplicated.slice(0, 10)) {
		const list = (effects.get(lead.submissionId) ?? [])
			.map((e) => `#${e.seq} key ${e.key ?? '(none)'} at ${e.at}`)
			.join('; ');
		counted.findings.push(
			`duplicated ${lead.submissionId}: effects ${list}; ${await trace(admin, schema, n8n, lead)}`,
		);
	}
	return counted;
}

/**
 * What n8n's lifecycle faults may leave behind that nobody will ever settle, read from the store
 * and the alert sink once nothing is in flight: letters still open for work that is done, alerts
 * about items that had already taken effect, and claims or write records left open.
 */
async function chaosCounts(input: {
	leads: Lead[];
	demo: DemoApi;
	admin: Client;
	schema: string;
}): Promise<
	Omit<
		ChaosCounts,
		'stopped' | 'stopsAsked' | 'kills' | 'selfExits' | 'drains' | 'workers' | 'configurations'
	>
> {
	const { leads, demo, admin, schema } = input;
	const submissions = leads.map((lead) => lead.submissionId);
	const byEmail = new Map(leads.map((lead) => [lead.email, lead.submissionId]));
	const effectsOf = new Map<string, number[]>();
	for (const effect of demo.effects) {
		const submission = byEmail.get(effect.email);
		if (submission)
			effectsOf.set(submission, [...(effectsOf.get(submission) ?? []), Date.parse(effect.at)]);
	}
	const claims = new Map(
		(
			await admin.query<{ event_id: string; status: string; completed_at: Date | null }>(
				`SELECT event_id, status, completed_at FROM "${schema}".processed_events WHERE consumer = $1 AND event_id = ANY($2)`,
				[CONSUMER, submissions],
			)
		).rows.map((c) => [c.event_id, c]),
	);
	const details: string[] = [];
	const workDone = (submission: string): boolean =>
		claims.get(submission)?.status === 'done' && effectsOf.get(submission)?.length === 1;

	const open = (
		await admin.query<{
			idempotency_key: string | null;
			status: string;
			error_class: string;
			execution_id: string | null;
			error_message: string | null;
		}>(
			`SELECT idempotency_key, status, error_class, execution_id, error_message FROM "${schema}".dead_letters WHERE is_open`,
		)
	).rows;
	// A write whose answer was lost and whose later attempts all failed cannot learn its outcome:
	// its record stays `unknown` and its letter asks a person to check the target. That the CRM
	// did take it is known only here, at the destination; such a letter is the design's answer,
	// counted apart, not as a letter nobody needed.
	const unknownKeys = new Set(
		(
			await admin.query<{ key: string }>(
				`SELECT key FROM "${schema}".idempotency_keys WHERE status = 'unknown'`,
			)
		).rows.map((r) => r.key),
	);
	const unknownForAPerson = (key: string | null): boolean => !!key && unknownKeys.has(key);
	let openLettersForDoneWork = 0;
	let unknownOutcomes = 0;
	for (const letter of open) {
		const submission = submissionOfKey(letter.idempotency_key ?? '');
		// The owner assignment is the one step after the upsert: its letter is work not done.
		if (!submission || letter.idempotency_key!.endsWith(OWNER_SUFFIX) || !workDone(submission))
			continue;
		if (letter.error_class === 'unknown_outcome' && unknownForAPerson(letter.idempotency_key)) {
			unknownOutcomes++;
			continue;
		}
		openLettersForDoneWork++;
		if (details.length < 10)
			details.push(
				`open letter for done work: ${letter.idempotency_key} (${letter.status}, ${letter.error_class}, execution ${letter.execution_id}: ${(letter.error_message ?? '').slice(0, 200)})`,
			);
	}

	// Writes parked because they could not learn their outcome, and when each key's success
	// became known (a later re-run's lookup, a replay): until then the store could not know.
	const unknownLetters = new Set(
		(
			await admin.query<{ idempotency_key: string }>(
				`SELECT DISTINCT idempotency_key FROM "${schema}".dead_letters WHERE error_class = 'unknown_outcome' AND idempotency_key IS NOT NULL`,
			)
		).rows.map((r) => r.idempotency_key),
	);
	const knownSucceededAt = new Map(
		(
			await admin.query<{ key: string; completed_at: Date }>(
				`SELECT key, completed_at FROM "${schema}".idempotency_keys WHERE status = 'succeeded' AND key = ANY($1)`,
				[[...unknownLetters]],
			)
		).rows.map((r) => [r.key, r.completed_at.getTime()]),
	);
	let alertsForDoneItems = 0;
	demo.alerts.forEach((alert, i) => {
		const at = demo.alertTimes[i];
		const key = alertedItemOf(alert);
		const submission = submissionOfKey(key);
		if (!submission) return;
		const done = key.endsWith(UPSERT_SUFFIX)
			? (effectsOf.get(submission) ?? []).some((effectAt) => effectAt < at)
			: key.startsWith('event:')
				? (claims.get(submission)?.completed_at?.getTime() ?? Infinity) < at
				: false;
		// The alert of a write that could not learn its outcome asks a person to check: its due,
		// unless the key's success was known before the alert went out.
		const unknownWhenAlerted =
			unknownLetters.has(key) && !((knownSucceededAt.get(key) ?? Infinity) < at);
		if (!done || unknownForAPerson(key) || unknownWhenAlerted) return;
		alertsForDoneItems++;
		if (details.length < 20) details.push(`alert for a done item: ${key}`);
	});

	const stuck = (
		await admin.query<{ what: string }>(
			`SELECT 'claim ' || consumer || ':' || event_id || ' in progress' AS what FROM "${schema}".processed_events
			 WHERE consumer = ANY($3) AND event_id = ANY($2) AND status = 'in_progress'
			 UNION ALL
			 SELECT 'write ' || k.key || ' ' || k.status || ' with no open letter' FROM "${schema}".idempotency_keys k
			 WHERE k.status IN ('in_progress', 'unknown')
			   -- A letter of the key, of its lead's event (<submission>:<step> is the key), or of the
			   -- execution that held it names the item for a person.
			   AND NOT EXISTS (SELECT 1 FROM "${schema}".dead_letters d WHERE d.is_open AND d.idempotency_key IN (
			       k.key, 'event:' || $1 || ':' || regexp_replace(k.key, ':[^:]*$', ''), 'execution:' || k.execution_id))`,
			[CONSUMER, submissions, CONSUMERS],
		)
	).rows;
	for (const row of stuck.slice(0, 10)) details.push(`stuck: ${row.what}`);

	// A letter is named by an alert when Notify put it in an issue (its trigger named the issue's
	// first item; later ones are counted in its updates), or by the item alert of its own key.
	// One alert per item: a letter counts as named when an alert named it or another letter of
	// its lead, or that letter is in an issue (a stopped run's write letter defers to the inbox's
	// letter of the same item).
	const alerted = new Set(demo.alerts.map(alertedItemOf));
	// A letter in an issue was alerted through it (the first item by name, the rest in updates):
	// its lead's other letters defer to it as well.
	const inIssues = (
		await admin.query<{ idempotency_key: string }>(
			`SELECT idempotency_key FROM "${schema}".dead_letters WHERE issue_id IS NOT NULL AND is_open AND idempotency_key IS NOT NULL`,
		)
	).rows.map((r) => r.idempotency_key);
	const alertedLeads = new Set(
		[...alerted, ...inIssues].map(submissionOfKey).filter((id): id is string => id !== undefined),
	);
	const unalerted = (
		await admin.query<{
			workflow_id: string;
			idempotency_key: string;
			error_class: string;
			step: string;
			execution_id: string | null;
			error_message: string | null;
		}>(
			`SELECT workflow_id, idempotency_key, error_class, step, execution_id, error_message FROM "${schema}".dead_letters WHERE status = 'new' AND issue_id IS NULL`,
		)
	).rows.filter(
		(l) =>
			!alerted.has(l.idempotency_key) &&
			!alertedLeads.has(submissionOfKey(l.idempotency_key) ?? ''),
	);
	const byClass: Record<string, number> = {};
	for (const letter of unalerted)
		byClass[letter.error_class] = (byClass[letter.error_class] ?? 0) + 1;
	if (unalerted.length > 0)
		details.push(
			`letters no alert named: ${Object.entries(byClass)
				.map(([why, n]) => `${why} ${n}`)
				.join(', ')}`,
		);
	for (const letter of unalerted.slice(0, 5))
		details.push(
			`letters no alert named, one: ${letter.idempotency_key} at ${letter.step} (${letter.error_class}, execution ${letter.execution_id}: ${(letter.error_message ?? '').slice(0, 160)})`,
		);
	// One item, one open letter and one alert: the most any one lead has.
	const lettersPerItem = new Map<string, number>();
	for (const letter of open) {
		const submission = submissionOfKey(letter.idempotency_key ?? '');
		if (submission) lettersPerItem.set(submission, (lettersPerItem.get(submission) ?? 0) + 1);
	}
	const alertsPerItem = new Map<string, number>();
	for (const alert of demo.alerts) {
		const submission = submissionOfKey(alertedItemOf(alert));
		if (submission) alertsPerItem.set(submission, (alertsPerItem.get(submission) ?? 0) + 1);
	}
	const most = (counts: Map<string, number>, what: string): number => {
		const [worst] = [...counts.entries()].sort((a, b) => b[1] - a[1]);
		if (worst && worst[1] > 1 && details.length < 20)
			details.push(`${what}: lead ${worst[0]} has ${worst[1]}`);
		return worst?.[1] ?? 0;
	};
	return {
		openLettersForDoneWork,
		unknownOutcomes,
		alertsForDoneItems,
		stuckRecords: stuck.length,
		lettersNotAlerted: unalerted.length,
		lettersPerItemMax: most(lettersPerItem, 'open letters of one lead'),
		alertsPerItemMax: most(alertsPerItem, 'alerts about one lead'),
		details,
	};
}

/**
 * The operator's replay after the cause is fixed, as the console's Replay does it: every open
 * `new` letter of a lead whose work is not done is asked for at once, and the bundled Replay
 * (its webhook, as *Replay now* calls it) takes and re-runs them in batches while the transient
 * faults go on. One of them is a poison: the CRM still refuses its lead, so its re-run fails in
 * the middle of a batch. Nothing is delivered again; only the store and the CRM are read.
 */
async function replayParked(input: {
	leads: Lead[];
	demo: DemoApi;
	admin: Client;
	schema: string;
	n8n: N8nProcess;
	options: CampaignOptions;
	say: (line: string) => void;
	/** The lead workflows whose letters are replayed. */
	leadIds: string[];
}): Promise<ReplayCounts> {
	const { leads, demo, admin, schema, n8n, options, say, leadIds } = input;
	const started = Date.now();
	const bySubmission = new Map(leads.map((lead) => [lead.submissionId, lead]));
	const effectsOf = (email: string): number => demo.effects.filter((e) => e.email === email).length;
	// A letter keyed by the bare submission is the one parked at the door (invalid).
	const leadOf = (key: string | null): Lead | undefined =>
		key ? bySubmission.get(submissionOfKey(key) ?? key) : undefined;
	const letters = (
		await admin.query<{ id: string; idempotency_key: string | null; error_class: string }>(
			`SELECT id, idempotency_key, error_class FROM "${schema}".dead_letters
			 WHERE is_open AND status = 'new' AND workflow_id = ANY($1) ORDER BY id`,
			[leadIds],
		)
	).rows
		.map((letter) => ({ ...letter, lead: leadOf(letter.idempotency_key) }))
		.filter(
			(letter): letter is typeof letter & { lead: Lead } =>
				letter.lead !== undefined && effectsOf(letter.lead.email) === 0,
		);
	const counts: ReplayCounts = {
		requested: letters.length,
		replayed: 0,
		failedAgain: 0,
		stuck: 0,
		failedLater: 0,
		replayedNotDone: 0,
		duplicated: 0,
		poisonEndedNew: false,
		runs: 0,
		wallMs: 0,
		details: [],
	};
	if (letters.length === 0) {
		counts.details.push('no open letter of a lead not done: nothing to replay');
		return counts;
	}
	// The poison: a local-phone lead's letter where there is one (the cause the operator fixed
	// does not cover it), in the middle of the first batch. A letter of the upsert, where the CRM
	// refuses it again: one of an earlier step would pass that step, and its lead would fail at
	// the upsert in a letter of its own.
	const locals = letters.filter((letter) => letter.lead.local);
	const atUpsert = (list: typeof letters) =>
		list.filter((letter) => letter.idempotency_key?.endsWith(UPSERT_SUFFIX));
	const candidates = [atUpsert(locals), locals, atUpsert(letters), letters].find(
		(list) => list.length > 0,
	)!;
	const poison = candidates[Math.floor(candidates.length / 2)];
	demo.faults = { ...demo.faults, rejectLocalPhones: false, rejectEmails: [poison.lead.email] };
	say(
		`  replay: the CRM accepts local numbers now; ${letters.length} letters asked for replay (${locals.length} of local-phone leads), the poison ${poison.idempotency_key} (its address still refused)`,
	);
	const store = new Store({
		...options.postgres,
		ssl: 'disable',
		schema,
		maxConnections: 2,
	});
	try {
		await updateDeadLetterStatuses(
			store,
			letters.map((letter) => letter.id),
			{
				to: 'replay_requested',
				actor: 'campaign operator',
				reason: 'the CRM accepts local numbers',
			},
		);
	} finally {
		await store.close();
	}
	const ids = letters.map((letter) => letter.id);
	const statuses = async () =>
		(
			await admin.query<{ id: string; status: string }>(
				`SELECT id, status FROM "${schema}".dead_letters WHERE id = ANY($1)`,
				[ids],
			)
		).rows;
	// Each Replay run takes up to 100 records and answers when its batch is done; the schedule
	// (every 5 minutes) may run one too. A record a run took and never finished is taken again
	// once its hold ends, so the wait allows for one hold.
	const deadline = Date.now() + (options.replayWaitMs ?? 900_000);
	for (;;) {
		const now = await statuses();
		const pending = now.filter((r) => ['replay_requested', 'being_fixed'].includes(r.status));
		if (pending.length === 0) break;
		if (Date.now() > deadline) {
			counts.stuck = pending.length;
			counts.details.push(
				`still taken or asked for after ${Math.round((Date.now() - started) / 1000)} s: ${pending
					.slice(0, 10)
					.map((r) => `${r.id} ${r.status}`)
					.join(', ')}`,
			);
			break;
		}
		if (pending.some((r) => r.status === 'replay_requested')) {
			counts.runs++;
			await n8n.api.webhook('reliability-replay', {}).catch(() => undefined);
		} else await sleep(2_000);
	}
	const final = new Map((await statuses()).map((r) => [r.id, r.status]));
	const openLeads = new Set(
		(
			await admin.query<{ idempotency_key: string }>(
				`SELECT idempotency_key FROM "${schema}".dead_letters WHERE is_open AND idempotency_key IS NOT NULL`,
			)
		).rows.map((r) => leadOf(r.idempotency_key)?.submissionId),
	);
	for (const letter of letters) {
		const status = final.get(letter.id);
		const effects = effectsOf(letter.lead.email);
		if (status === 'replayed') {
			counts.replayed++;
			if (effects === 0 && openLeads.has(letter.lead.submissionId)) counts.failedLater++;
			else if (effects !== 1) {
				counts.replayedNotDone++;
				if (counts.details.length < 10)
					counts.details.push(
						`replayed but upserted ${effects} times: ${letter.idempotency_key} (letter ${letter.id})`,
					);
			}
		} else if (status === 'new') counts.failedAgain++;
	}
	const [last] = (
		await admin.query<{ to_status: string; reason: string | null }>(
			`SELECT to_status, reason FROM "${schema}".dead_letter_events WHERE dead_letter_id = $1 ORDER BY id DESC LIMIT 1`,
			[poison.id],
		)
	).rows;
	// Back in new with why: the lead workflow parks its failed re-run again itself (the CRM's
	// refusal as the reason), or Replay records "the re-run failed: …" when the run threw.
	counts.poisonEndedNew =
		final.get(poison.id) === 'new' &&
		last?.to_status === 'new' &&
		(last.reason ?? '').trim() !== '' &&
		effectsOf(poison.lead.email) === 0;
	if (!counts.poisonEndedNew)
		counts.details.push(
			`the poison ${poison.idempotency_key} ended ${final.get(poison.id)} (last change to ${last?.to_status}: ${last?.reason}), upserted ${effectsOf(poison.lead.email)} times`,
		);
	counts.duplicated = leads.filter((lead) => effectsOf(lead.email) > 1).length;
	if (counts.duplicated > 0)
		counts.details.push(`${counts.duplicated} leads upserted twice after the replays`);
	counts.wallMs = Date.now() - started;
	return counts;
}

/**
 * Queue mode: the executions n8n's database has as new or running that its queue no longer holds
 * (each died with a killed worker), and how many of them are the lead workflow's. Read from the
 * database first: an execution enqueued after that read is not among them.
 */
async function lostWithWorkers(
	database: PgSettings,
	redis: QueueRedis,
	leadIds: string[],
): Promise<{ all: string[]; lead: number }> {
	const rows = await queryServer<{ id: string; workflow_id: string }>(
		database,
		`SELECT id::text AS id, "workflowId" AS workflow_id FROM execution_entity WHERE status IN ('new', 'running') ORDER BY id`,
	);
	if (rows.length === 0) return { all: [], lead: 0 };
	const queued = await queuedExecutionIds(redis);
	const lost = rows.filter((row) => !queued.has(row.id));
	return {
		all: lost.map((row) => row.id),
		lead: lost.filter((row) => leadIds.includes(row.workflow_id)).length,
	};
}

/** The worked example as the campaign runs it: its timeout, and Check Order when asked for. */
function leadWorkflowFor(workflow: WorkflowFile, options: CampaignOptions): WorkflowFile {
	const nodes = (
		workflow.nodes as Array<{ type: string; parameters: Record<string, unknown> }>
	).map((node) =>
		options.checkOrder && node.type === 'n8n-nodes-reliability.eventDedupe'
			? {
					...node,
					parameters: {
						...node.parameters,
						checkOrder: true,
						entityKey: '={{ $json.body.email }}',
						entityVersion: '={{ $json.body.version }}',
					},
				}
			: node,
	);
	return {
		...workflow,
		nodes,
		settings: options.executionTimeoutSeconds
			? { ...workflow.settings, executionTimeout: options.executionTimeoutSeconds }
			: workflow.settings,
	};
}

/**
 * The submission a dead letter's key names: `<submission>:<step>` (the worked example's writes and
 * owner lookup) or `event:<consumer>:<submission>` (the inbox's letters); undefined for any other
 * key (the bare submission of a lead refused at the door, `execution:<id>`, `trigger:<workflow>`).
 */
function submissionOfKey(key: string): string | undefined {
	for (const suffix of [UPSERT_SUFFIX, ENRICH_SUFFIX, OWNER_SUFFIX])
		if (key.endsWith(suffix)) return key.slice(0, -suffix.length);
	for (const consumer of CONSUMERS)
		if (key.startsWith(`event:${consumer}:`)) return key.slice(`event:${consumer}:`.length);
	return undefined;
}

/** The submission a failed execution was processing, from its webhook's output. */
async function submissionOfExecution(n8n: N8nProcess, id: string): Promise<string | undefined> {
	const execution = await n8n.api.execution(id).catch(() => undefined);
	// A crashed execution may have no run data at all.
	const run = execution?.data?.resultData?.runData?.['Lead Form']?.[0];
	const body = run?.data?.main[0]?.[0]?.json.body as { submissionId?: string } | undefined;
	return body?.submissionId;
}

/**
 * The item an alert names: a trigger's first line ends with it in parentheses
 * ("<workflow>: <impact> (<key>)"); a channel alert carries its text, a page its summary.
 */
function alertedItemOf(alert: unknown): string {
	const a = alert as { text?: string; payload?: { summary?: string } };
	const line = String(a.text ?? a.payload?.summary ?? '').split('\n')[0];
	return /\(([^()]*)\)$/.exec(line)?.[1] ?? '';
}

/** Where a lead's trail ends in the store: its claim, its write records and their executions. */
async function trace(admin: Client, schema: string, n8n: N8nProcess, lead: Lead): Promise<string> {
	const claims = (
		await admin.query<{ status: string; execution_id: string | null }>(
			`SELECT status, execution_id FROM "${schema}".processed_events WHERE consumer = $1 AND event_id = $2`,
			[CONSUMER, lead.submissionId],
		)
	).rows;
	const keys = (
		await admin.query<{
			scope: string;
			key: string;
			status: string;
			attempts: number;
			last_error: string | null;
			execution_id: string | null;
			response_status: number | null;
		}>(
			`SELECT scope, key, status, attempts, last_error, execution_id, response_status FROM "${schema}".idempotency_keys WHERE key LIKE $1 ORDER BY created_at`,
			[`${lead.submissionId}:%`],
		)
	).rows;
	const executions = new Set(
		[...claims.map((c) => c.execution_id), ...keys.map((k) => k.execution_id)].filter(
			(id): id is string => !!id,
		),
	);
	const runs: string[] = [];
	for (const id of executions) {
		const execution = await n8n.api.execution(id).catch(() => undefined);
		if (!execution) {
			runs.push(`execution ${id}: not found`);
			continue;
		}
		// A crashed execution may carry no run data at all.
		const result = execution.data?.resultData;
		const nodes = Object.keys(result?.runData ?? {}).join(' > ') || 'no node';
		runs.push(
			`execution ${id}: ${execution.status}, ran ${nodes}${result?.error ? `, error "${result.error.message}"` : ''}`,
		);
	}
	const claimText = claims.length
		? claims.map((c) => `claim ${c.status} by execution ${c.execution_id}`).join(', ')
		: 'no claim';
	const keyText = keys
		.map(
			(k) =>
				`${k.key} ${k.status} after ${k.attempts} attempts${k.response_status ? ` (${k.response_status})` : ''}${k.last_error ? ` "${k.last_error}"` : ''}`,
		)
		.join(', ');
	return [claimText, keyText || 'no write records', ...runs].join('; ');
}

const pct = (share: number): string => `${Math.round(share * 1000) / 10}%`;

/** The campaign's report: the counts, what went into them, and last the JSON line. */
export function report(
	result: CampaignResult,
	say: (line: string) => void = (line) => void process.stdout.write(`${line}\n`),
): void {
	const f = result.faults;
	say('');
	say(
		`faults injected: ${f.enrichTimeouts} of ${f.enrichCalls} enrichment calls timed out; ${f.crmUnavailable} of ${f.crmWrites} CRM writes answered 503, ${f.crmLost} answers lost after commit, ${f.crmRejected} rejected (422), ${f.crmReplayed} answered from the saved response of their key`,
	);
	say(
		`executions of the worked example: ${result.executions.finished} finished of ${result.deliveries} deliveries (${Object.entries(
			result.executions.byStatus,
		)
			.map(([status, n]) => `${status} ${n}`)
			.join(
				', ',
			)}); unfinished in n8n: ${result.executions.unfinished}${result.executions.lostWithWorkers ? ` (${result.executions.lostWithWorkers} of them died with a killed worker: n8n's queue no longer holds them)` : ''}`,
	);
	const also = Object.entries(result.doneAndParkedBy)
		.map(([why, n]) => `${why} ${n}`)
		.join(', ');
	say(
		`done:       ${result.done} (in the CRM exactly once${result.doneAndParked ? `; ${result.doneAndParked} of them also parked after a lost answer: ${also}` : ''})`,
	);
	say(
		`parked:     ${result.parked} (in dead letters, not in the CRM${
			Object.keys(result.parkedBy).length
				? `: ${Object.entries(result.parkedBy)
						.sort((a, b) => b[1] - a[1])
						.map(([why, n]) => `${why} ${n}`)
						.join(', ')}`
				: ''
		})`,
	);
	say(`lost:       ${result.lost} (neither in the CRM nor parked)`);
	say(`duplicated: ${result.duplicated} (upsert took effect more than once)`);
	if (result.misrouted)
		say(
			`misrouted:  ${result.misrouted} leads with a local phone in the CRM although it rejects them`,
		);
	if (result.strayEffects)
		say(
			`stray:      ${result.strayEffects} effects at the CRM that belong to no lead of the campaign`,
		);
	if (!result.settled) say('NOT SETTLED: counted while executions were still unfinished');
	for (const finding of result.findings) say(`  ${finding}`);
	for (const note of result.notes) say(`  note: ${note}`);
	const c = result.chaos;
	const lifecycle = c.stopsAsked > 0 || c.kills > 0 || c.drains > 0 || f.crmCrashText > 0;
	if (lifecycle) {
		const killed = c.workers > 0 ? `${c.workers} workers: killed` : 'n8n killed';
		say(
			`lifecycle faults: ${c.stopped} of ${c.stopsAsked} executions stopped through the API, ${killed} ${c.kills} times${c.workers > 0 ? `, drained ${c.drains} times` : ''} (and exited on its own ${c.selfExits} times), ${f.crmCrashText} CRM writes answered 502 "Upstream service crashed"`,
		);
		say(
			`left behind: ${c.openLettersForDoneWork} open letters for done work, ${c.alertsForDoneItems} alerts for done items, ${c.stuckRecords} stuck records; ${c.lettersNotAlerted} letters waiting for a person that no alert named; ${c.unknownOutcomes} unknown outcomes left to a person (taken at the CRM, the answer lost, every later attempt failed)`,
		);
		say(
			`per lead: at most ${c.lettersPerItemMax} open letters and ${c.alertsPerItemMax} alerts; configurations: ${c.configurations.join('; ')}`,
		);
		for (const detail of c.details) say(`  ${detail}`);
	}
	const r = result.replay;
	if (r) {
		say(
			`replay: ${r.requested} letters asked for, ${r.replayed} replayed (${r.failedLater} of them passed their step and failed at a later one, in its own open letter), ${r.failedAgain} back in new with a reason (the poison ${r.poisonEndedNew ? 'among them' : 'NOT among them'}), ${r.stuck} still taken; ${r.replayedNotDone} replayed without their upsert taken once and in no open letter, ${r.duplicated} leads upserted twice; ${r.runs} Replay runs in ${Math.round(r.wallMs / 1000)} s`,
		);
		for (const detail of r.details) say(`  ${detail}`);
	}
	say(`wall time: ${Math.round(result.wallMs / 1000)} s`);
	say(
		JSON.stringify({
			bench: 'campaign',
			items: result.items,
			lost: result.lost,
			duplicated: result.duplicated,
			parked: result.parked,
		}),
	);
	if (lifecycle)
		say(
			JSON.stringify({
				bench: 'chaos',
				items: result.items,
				lost: result.lost,
				duplicated: result.duplicated,
				open_letters_for_done_work: c.openLettersForDoneWork,
				alerts_for_done_items: c.alertsForDoneItems,
				stuck_records: c.stuckRecords,
				letters_not_alerted: c.lettersNotAlerted,
				unknown_outcomes: c.unknownOutcomes,
				letters_per_item_max: c.lettersPerItemMax,
				alerts_per_item_max: c.alertsPerItemMax,
				configurations: c.configurations,
				stopped: c.stopped,
				kills: c.kills,
				self_exits: c.selfExits,
				...(c.workers > 0 ? { workers: c.workers, drains: c.drains } : {}),
				...(r
					? {
							replay_requested: r.requested,
							replayed: r.replayed,
							replay_failed_again: r.failedAgain,
							replay_failed_later: r.failedLater,
							replay_stuck: r.stuck,
							replayed_not_done: r.replayedNotDone,
							replay_duplicated: r.duplicated,
							poison_ended_new: r.poisonEndedNew,
						}
					: {}),
			}),
		);
}

/** Problems the replay phase found: a letter stuck, a replay without its effect, a duplicate, a poison that did not end alone. */
export function replayProblems(replay: ReplayCounts | undefined): number {
	if (!replay || replay.requested === 0) return 0;
	return (
		replay.stuck + replay.replayedNotDone + replay.duplicated + (replay.poisonEndedNew ? 0 : 1)
	);
}

/** A whole number from `--name N`, `--name=N` or the environment variable, else the fallback. */
function countFromArgs(
	argv: string[],
	name: string,
	envName: string,
	fallback: number,
	min: number,
): number {
	const at = argv.findIndex((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`));
	const raw =
		at < 0 ? process.env[envName] : argv[at].includes('=') ? argv[at].split('=')[1] : argv[at + 1];
	const value = Number(raw ?? fallback);
	if (!Number.isInteger(value) || value < min)
		throw new Error(`--${name} must be a whole number of at least ${min}, got ${raw}`);
	return value;
}

const envNumber = (name: string): number | undefined =>
	process.env[name] === undefined ? undefined : Number(process.env[name]);

async function main(): Promise<void> {
	const argv = process.argv.slice(2);
	const items = countFromArgs(argv, 'items', 'CAMPAIGN_ITEMS', 10_000, 1);
	// --chaos: n8n's execution lifecycle as well as the network: running executions stopped through
	// the API, workflow timeouts, n8n killed twice in a row (so it reports crashes again), and
	// CRM errors whose text says "crashed".
	const chaos = argv.includes('--chaos') || process.env.CAMPAIGN_CHAOS === '1';
	const crashes = countFromArgs(argv, 'crashes', 'CAMPAIGN_CRASHES', chaos ? 2 : 0, 0);
	// --queue: n8n in queue mode, --workers N (default 2) `n8n worker` processes running the
	// executions; with --chaos a worker is drained twice as well.
	const queue = argv.includes('--queue') || process.env.CAMPAIGN_QUEUE === '1';
	const workers = countFromArgs(argv, 'workers', 'CAMPAIGN_WORKERS', 2, 1);
	const version = process.env.N8N_VERSION ?? DEFAULT_N8N_VERSIONS[0];
	const postgres = await ensurePostgres('campaign');
	try {
		const result = await runCampaign({
			items,
			install: await installN8n(version),
			tarball: await packPackage(),
			postgres: postgres.settings,
			faultRate: envNumber('CAMPAIGN_FAULT_RATE'),
			lostRate: envNumber('CAMPAIGN_LOST_RATE'),
			localPhoneRate: envNumber('CAMPAIGN_LOCAL_PHONE_RATE'),
			duplicateRate: envNumber('CAMPAIGN_DUPLICATE_RATE'),
			senders: envNumber('CAMPAIGN_SENDERS'),
			n8nConcurrency: envNumber('CAMPAIGN_N8N_CONCURRENCY'),
			seed: envNumber('CAMPAIGN_SEED'),
			crashes,
			keepFindings: true,
			...(queue ? { queue: { workers }, drains: chaos ? 2 : 0 } : {}),
			...(chaos
				? {
						crashesTwice: true,
						stops: Math.max(5, Math.round(items / 50)),
						crashTextRate: 0.03,
						executionTimeoutSeconds: 30,
						checkOrder: true,
						replay: true,
						configurations: { wait: 0.05, sub: 0.1 },
					}
				: {}),
		});
		report(result);
		const leftBehind =
			result.chaos.openLettersForDoneWork +
			result.chaos.alertsForDoneItems +
			result.chaos.stuckRecords +
			Math.max(0, result.chaos.lettersPerItemMax - 1) +
			Math.max(0, result.chaos.alertsPerItemMax - 1);
		process.exitCode =
			result.lost > 0 ||
			result.duplicated > 0 ||
			!result.settled ||
			(chaos && leftBehind > 0) ||
			replayProblems(result.replay) > 0
				? 1
				: 0;
	} finally {
		await postgres.stop();
	}
}

if (require.main === module) {
	main().catch((error: unknown) => {
		process.stderr.write(
			`campaign failed: ${error instanceof Error ? error.stack : String(error)}\n`,
		);
		process.exit(1);
	});
}
