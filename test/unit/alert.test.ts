import { composeAlert, isHeld } from '../../lib/alerts';

describe('composeAlert', () => {
	it('names the workflow, the item and the impact first, then why, what happened, the link and the next action', () => {
		const alert = composeAlert({
			workflowName: 'Lead routing',
			workflowId: 'wf1',
			key: 'form-7f3a:crm-upsert',
			impact: 'lead not in CRM',
			owner: 'sales-ops',
			message: 'phone: invalid format',
			alreadyHappened: 'enriched, not in CRM',
			runLink: 'https://n8n.example.com/workflow/wf1/executions/9',
			deadLetterId: '42',
		});
		expect(alert).toEqual({
			dedupKey: 'n8n-reliability:wf1:form-7f3a:crm-upsert',
			action: 'trigger',
			severity: 'normal',
			owner: 'sales-ops',
			text: [
				'Lead routing: lead not in CRM (form-7f3a:crm-upsert)',
				'Why: phone: invalid format',
				'Already happened: enriched, not in CRM',
				'Run: https://n8n.example.com/workflow/wf1/executions/9',
				'Dead letter: 42',
				'Next action (sales-ops): Fix the cause (phone: invalid format), then set the record to replay_requested',
			].join('\n'),
		});
	});

	it('reads a dead-letter record and an item out of Park the same way', () => {
		const record = composeAlert({
			workflow_name: 'Billing',
			workflow_id: 'wf2',
			idempotency_key: 'inv-1',
			error_message: 'HTTP 429',
			error_class: 'rate_limited',
			retry_after: '2026-01-01T10:00:00.000Z',
			id: '7',
			item_index: 0,
		});
		expect(record.text).toContain('Billing: an item needs attention (inv-1)');
		expect(record.text).toContain(
			'Next action (the workflow owner): Nothing to fix: it can be replayed after 2026-01-01T10:00:00.000Z',
		);
		const parked = composeAlert({ lead: 'x', _deadLetter: { id: '8' }, workflowName: 'W' });
		expect(parked.text).toContain('W: an item needs attention (item ?)');
		expect(parked.text).toContain('Dead letter: 8');
	});

	it('masks secrets in every line, and the configured fields', () => {
		const canary = 'cAnArY-al3rt';
		const alert = composeAlert(
			{
				workflowName: 'Sync',
				key: 'k1',
				message: `401 - {"error":"bad key","api_key":"${canary}"} with Authorization: Bearer ${canary}`,
				alreadyHappened: `logged in with password=${canary}`,
				impact: 'orders not synced',
				owner: 'ops',
				nextAction: `rotate token=${canary}, ssn: 123-45`,
			},
			{ maskFields: ['ssn'] },
		);
		expect(JSON.stringify(alert)).not.toContain(canary);
		expect(alert.text).not.toContain('123-45');
		expect(alert.text).toContain('Authorization: [masked]');
	});

	it('any input, of any type, makes an alert', () => {
		for (const input of [null, 42, 'text', [1, 2], { message: { nested: true } }])
			expect(composeAlert(input).text.split('\n')).toHaveLength(6);
	});
});

describe('alerts from the shapes that feed them', () => {
	it("an item out of Park names the workflow, the item and the impact from its record's summary", () => {
		const alert = composeAlert({
			invoice: 'INV-20931',
			amount: 120,
			_deadLetter: {
				id: '42',
				status: 'new',
				workflowId: 'wf-ledger',
				workflowName: 'Invoices to the ledger',
				step: 'Post to Ledger',
				class: 'permanent',
				message: 'amount must be positive',
				idempotencyKey: 'INV-20931:post',
				impact: 'invoice not in the ledger',
				alreadyHappened: 'matched to PO-77',
				owner: 'finance',
				runLink: 'https://n8n.example/workflow/wf-ledger/executions/9',
			},
		});
		expect(alert.text.split('\n')).toEqual([
			'Invoices to the ledger: invoice not in the ledger (INV-20931:post)',
			'Why: amount must be positive',
			'Already happened: matched to PO-77',
			'Run: https://n8n.example/workflow/wf-ledger/executions/9',
			'Dead letter: 42',
			'Next action (finance): Fix the cause (amount must be positive), then set the record to replay_requested',
		]);
	});

	it('reads the camelCase record names (a trace entry, a park request) as the others', () => {
		const alert = composeAlert({
			workflowName: 'Billing',
			idempotencyKey: 'inv-2',
			errorClass: 'rate_limited',
			errorMessage: 'HTTP 429',
			retryAfter: '2026-01-01T10:00:00.000Z',
		});
		expect(alert.text.split('\n')).toEqual([
			'Billing: an item needs attention (inv-2)',
			'Why: HTTP 429',
			'Already happened: unknown',
			'Run: n/a',
			'Dead letter: n/a',
			'Next action (the workflow owner): Nothing to fix: it can be replayed after 2026-01-01T10:00:00.000Z',
		]);
	});

	it('a held item is not an alert, whatever carries it', () => {
		expect(isHeld({ class: 'paused', message: 'integration crm is paused' })).toBe(true);
		expect(isHeld({ status: 'held', error_class: 'paused' })).toBe(true);
		expect(isHeld({ id: 1, _deadLetter: { status: 'held' } })).toBe(true);
		expect(isHeld({ errorClass: 'paused', errorMessage: 'integration crm is paused' })).toBe(true);
		expect(isHeld({ class: 'permanent' })).toBe(false);
		expect(isHeld({ _deadLetter: { status: 'new', class: 'permanent' } })).toBe(false);
		// A payload's own fields do not speak for its record.
		expect(isHeld({ status: 'held', _deadLetter: { status: 'new', class: 'permanent' } })).toBe(
			false,
		);
	});

	it('names the last three attempts of a Failed item, with their delays', () => {
		const attempt = (n: number, delayMs?: number) => ({
			at: '2026-01-01T10:00:00.000Z',
			attempt: n,
			kind: 'response',
			status: 503,
			class: 'transient',
			delayMs,
			message: 'Service Unavailable',
		});
		const alert = composeAlert({
			workflowName: 'Billing',
			key: 'inv-1',
			message: 'Service Unavailable (gave up after 4 attempts)',
			attemptHistory: [attempt(2, 1200), attempt(3, 2500), attempt(4)],
		});
		expect(alert.text.split('\n')[2]).toBe(
			'Last attempts: #2 HTTP 503 transient, next in 1.2 s (Service Unavailable); #3 HTTP 503 transient, next in 2.5 s (Service Unavailable); #4 HTTP 503 transient (Service Unavailable)',
		);
	});
});
