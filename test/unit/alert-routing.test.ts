import {
	AlertRoute,
	ImpactClass,
	impactOf,
	inWorkingHours,
	normalizedMessage,
	parseWorkingHours,
	routeOf,
} from '../../lib/alerts';

describe('the cause of a failure', () => {
	it('takes out what differs per item: quoted values, numbers, IDs, e-mail addresses, URLs', () => {
		const messages = [
			'phone: invalid format "0151 2345678"',
			'phone: invalid format "030 99"',
			"Phone: invalid format '+1 (555) 010'",
		];
		expect(new Set(messages.map(normalizedMessage))).toEqual(
			new Set(['phone: invalid format "…"']),
		);
		expect(
			normalizedMessage(
				'Lead INV-20931 for ana@acme.io at https://crm.example/x/7 failed after 3 tries',
			),
		).toBe('lead <id> for <email> at <url> failed after <n> tries');
		expect(normalizedMessage('owner unknown')).not.toBe(normalizedMessage('phone: invalid format'));
	});
});

describe('where an alert goes', () => {
	const berlin = parseWorkingHours('sales-ops', 'Mon-Fri 09:00-17:00', 'Europe/Berlin');

	it("knows the owner's working hours in the owner's time zone", () => {
		// Wednesday 2 December 2026; Berlin is UTC+1 in winter.
		expect(inWorkingHours(berlin, new Date('2026-12-02T08:00:00Z'))).toBe(true); // 09:00
		expect(inWorkingHours(berlin, new Date('2026-12-02T07:59:00Z'))).toBe(false); // 08:59
		expect(inWorkingHours(berlin, new Date('2026-12-02T16:00:00Z'))).toBe(false); // 17:00
		expect(inWorkingHours(berlin, new Date('2026-12-05T10:00:00Z'))).toBe(false); // Saturday
		const night = parseWorkingHours('noc', 'Mon,Tue 22:00-06:00', 'UTC');
		expect(inWorkingHours(night, new Date('2026-11-30T23:00:00Z'))).toBe(true); // Monday 23:00
		expect(inWorkingHours(night, new Date('2026-12-02T05:00:00Z'))).toBe(true); // Wednesday 05:00, Tuesday's night
		expect(inWorkingHours(night, new Date('2026-12-03T05:00:00Z'))).toBe(false); // Thursday 05:00
	});

	it('refuses working hours and time zones it cannot read, saying what to write', () => {
		expect(() => parseWorkingHours('x', 'weekdays 9 to 5', 'UTC')).toThrow(
			/Working hours of owner "x" cannot be read: "weekdays 9 to 5"/,
		);
		expect(() => parseWorkingHours('x', 'Mon-Fri 09:00-17:00', 'Mars/Olympus')).toThrow(
			/Time zone "Mars\/Olympus" of owner "x" is not an IANA time zone/,
		);
	});

	it('pages money and customer-facing impact at any hour; internal waits for hours or the digest; unclassified goes to the channel', () => {
		const night = new Date('2026-12-02T02:00:00Z');
		const day = new Date('2026-12-02T10:00:00Z');
		expect(routeOf(ImpactClass.money, berlin, night)).toBe(AlertRoute.page);
		expect(routeOf(ImpactClass.customer, undefined, night)).toBe(AlertRoute.page);
		expect(routeOf(ImpactClass.internal, berlin, night)).toBe(AlertRoute.digest);
		expect(routeOf(ImpactClass.internal, berlin, day)).toBe(AlertRoute.channel);
		expect(routeOf(ImpactClass.internal, undefined, night)).toBe(AlertRoute.channel);
		expect(routeOf(ImpactClass.unclassified, berlin, night)).toBe(AlertRoute.channel);
	});

	it('takes the impact class of the first rule naming the integration, workflow ID or name', () => {
		const rules = [
			{ match: 'Billing', impact: ImpactClass.money },
			{ match: 'wfLeads', impact: ImpactClass.customer },
		];
		expect(impactOf(rules, { integration: 'billing' })).toBe(ImpactClass.money);
		expect(impactOf(rules, { workflowId: 'wfLeads', integration: 'crm' })).toBe(
			ImpactClass.customer,
		);
		expect(impactOf(rules, { workflowName: 'Other' })).toBe(ImpactClass.unclassified);
	});
});
