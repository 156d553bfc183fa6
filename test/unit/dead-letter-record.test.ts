import { toDeadLetter } from '../../lib/deadletter';
import { runLink } from '../../lib/runLink';

describe('toDeadLetter', () => {
	const parkedAt = new Date('2026-01-01T10:00:00.000Z');
	const row = {
		id: 42,
		workflow_id: 'wf-leads',
		workflow_name: 'Lead routing',
		execution_id: '9',
		step: 'CRM Upsert',
		item_index: 0,
		item_key: 'key:lead-1',
		idempotency_key: 'lead-1',
		run_link: 'https://n8n.example/workflow/wf-leads/executions/9',
		integration: 'crm',
		error_class: 'permanent',
		error_message: 'HTTP 422',
		error_status: 422,
		attempts: 1,
		failure_count: 2,
		already_happened: 'enriched',
		impact: 'lead not in CRM',
		owner: 'sales-ops',
		severity: 'normal',
		status: 'new',
		is_open: true,
		previous_status: null,
		payload: { lead: 1 },
		retry_after: null,
		first_failed_at: parkedAt,
		last_failed_at: parkedAt,
		parked_at: parkedAt,
		closed_at: null,
		updated_at: parkedAt,
		expires_at: parkedAt,
		generation: 3,
		taken_by: null,
		hold_reason: null,
		attempt_history: [{ attempt: 1, status: 422 }],
		source_version: 'fingerprint:abc',
		steps: [],
		history: [{ actor: 'ops', toStatus: 'new' }],
	};

	it('names every column in camelCase and leaves the store bookkeeping out', () => {
		expect(toDeadLetter(row)).toEqual({
			id: '42',
			status: 'new',
			workflowId: 'wf-leads',
			workflowName: 'Lead routing',
			executionId: '9',
			step: 'CRM Upsert',
			itemIndex: 0,
			idempotencyKey: 'lead-1',
			runLink: 'https://n8n.example/workflow/wf-leads/executions/9',
			integration: 'crm',
			errorClass: 'permanent',
			errorMessage: 'HTTP 422',
			errorStatus: 422,
			attempts: 1,
			failureCount: 2,
			alreadyHappened: 'enriched',
			impact: 'lead not in CRM',
			owner: 'sales-ops',
			severity: 'normal',
			retryAfter: null,
			firstFailedAt: parkedAt,
			lastFailedAt: parkedAt,
			parkedAt,
			closedAt: null,
			holdReason: null,
			payload: { lead: 1 },
			attemptHistory: [{ attempt: 1, status: 422 }],
			steps: [],
			sourceVersion: 'fingerprint:abc',
			generation: '3',
			takenBy: null,
			updatedAt: parkedAt,
			expiresAt: parkedAt,
			history: [{ actor: 'ops', toStatus: 'new' }],
		});
	});

	it('a listed row without payload or history gives a record without them', () => {
		const { payload, history, attempt_history, steps, generation, ...listed } = row;
		void [payload, history, attempt_history, steps, generation];
		const record = toDeadLetter(listed);
		expect(record).not.toHaveProperty('payload');
		expect(record).not.toHaveProperty('history');
		expect(record).not.toHaveProperty('generation');
		expect(record.idempotencyKey).toBe('lead-1');
	});
});

describe('runLink', () => {
	it('links the execution page under the base URL, each ID encoded', () => {
		expect(runLink('https://n8n.example/', 'wf-leads', '9')).toBe(
			'https://n8n.example/workflow/wf-leads/executions/9',
		);
		expect(runLink('https://n8n.example/base//', 'wf/a b', '9?x')).toBe(
			'https://n8n.example/base/workflow/wf%2Fa%20b/executions/9%3Fx',
		);
	});

	it('is undefined without both IDs: no link to a page that does not exist', () => {
		expect(runLink('https://n8n.example', undefined, '9')).toBeUndefined();
		expect(runLink('https://n8n.example', 'wf-leads', '')).toBeUndefined();
	});
});
