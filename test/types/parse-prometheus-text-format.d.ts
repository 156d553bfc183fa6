/** The Prometheus text-format parser the metrics tests check the endpoint's output with. */
declare module 'parse-prometheus-text-format' {
	export default function parsePrometheusTextFormat(text: string): Array<{
		name: string;
		help: string;
		type: string;
		metrics: Array<{ labels?: Record<string, string>; value: string }>;
	}>;
}
