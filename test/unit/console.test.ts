import { actionToken, escapeHtml, html, operatorOf, raw } from '../../lib/console';
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

	it('the form token differs per credential and is stable for the same one', () => {
		const a = actionToken({ headers: { authorization: basic('maria:x') } });
		expect(actionToken({ headers: { authorization: basic('maria:x') } })).toBe(a);
		expect(actionToken({ headers: { authorization: basic('maria:y') } })).not.toBe(a);
	});
});

describe('Prometheus label values', () => {
	it('escape backslash, double quote and newline', () => {
		expect(escapeLabel('a\\b"c"\nd')).toBe('a\\\\b\\"c\\"\\nd');
	});
});
