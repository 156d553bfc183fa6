import { randomBytes } from 'node:crypto';
import { escapeHtml, formToken, formTokenValid, html, operatorOf, raw } from '../../lib/console';
import { parkedPerDayChart } from '../../lib/console/chart';
import { escapeLabel } from '../../lib/console/metrics';

describe('console HTML', () => {
	it('escapes every interpolated value, and only markup built by the template passes through', () => {
		const value = `<script>alert("x")</script> & 'quoted'`;
		expect(html`<p>${value}</p>`.value).toBe(
			'<p>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quoted&#39;</p>',
		);
		expect(html`<div>${html`<b>${value}</b>`}</div>`.value).toBe(
			`<div><b>${escapeHtml(value)}</b></div>`,
		);
		expect(html`<i>${raw('<br>')}</i>`.value).toBe('<i><br></i>');
		expect(html`${[1, '<', null, undefined, false]}`.value).toBe('1&lt;');
	});

	it('an attribute value cannot break out of its quotes', () => {
		expect(html`<input value="${'" onfocus="alert(1)'}">`.value).toBe(
			'<input value="&quot; onfocus=&quot;alert(1)">',
		);
	});

	it('the chart has one bar per day of the window, empty days included', () => {
		const svg = parkedPerDayChart(
			[{ day: '2026-11-29', parked: 4 }],
			3,
			new Date('2026-11-30T12:00:00Z'),
		).value;
		expect(svg.match(/<rect /g)).toHaveLength(3);
		expect(svg).toContain('data-day="2026-11-28" data-parked="0"');
		expect(svg).toContain('data-day="2026-11-29" data-parked="4"');
		expect(svg).toContain('data-day="2026-11-30" data-parked="0"');
	});
});

describe('console sign-in', () => {
	const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;

	it('the operator is the Basic auth user name, or the proxy header when one is configured', () => {
		expect(operatorOf({ headers: { Authorization: basic('maria:pa:ss') } })).toBe('maria');
		expect(operatorOf({ headers: {} })).toBeNull();
		expect(
			operatorOf(
				{ headers: { authorization: basic('maria:x'), 'x-forwarded-user': 'jonas@example.com' } },
				{ operatorHeader: 'X-Forwarded-User' },
			),
		).toBe('jonas@example.com');
	});

	it('the form token is bound to the secret, the operator and the hour', () => {
		const secret = randomBytes(32);
		const at = Date.UTC(2026, 0, 1, 10, 30);
		const token = formToken(secret, 'maria', at);
		expect(formTokenValid(secret, 'maria', token, at)).toBe(true);
		// Still accepted in the next hour, so a page loaded at 10:59 posts at 11:01.
		expect(formTokenValid(secret, 'maria', token, at + 3_600_000)).toBe(true);
		expect(formTokenValid(secret, 'maria', token, at + 2 * 3_600_000)).toBe(false);
		expect(formTokenValid(secret, 'jonas', token, at)).toBe(false);
		expect(formTokenValid(randomBytes(32), 'maria', token, at)).toBe(false);
		expect(formTokenValid(secret, 'maria', '', at)).toBe(false);
		expect(formTokenValid(secret, 'maria', `${token}x`, at)).toBe(false);
	});
});

describe('Prometheus label values', () => {
	it('escape backslash, double quote and newline', () => {
		expect(escapeLabel('a\\b"c"\nd')).toBe('a\\\\b\\"c\\"\\nd');
	});
});
