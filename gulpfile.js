// The build after tsc: copies the icons and the nodes' codex files (categories, documentation
// links, which n8n reads when it loads the package), and bundles the engine so that the
// published package needs nothing from node_modules and reads nothing from disk at run time.
// tsc emits dist/; then esbuild turns dist/lib/index.js (the one module every node requires)
// into a single file with the Postgres driver, the store's numbered SQL migrations and the
// console's stylesheet inside, the rest of dist/lib goes, and a check fails the build when any
// file in dist/ requires what the package does not ship.
const { builtinModules } = require('node:module');
const { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { dirname, join, relative, resolve } = require('node:path');
const esbuild = require('esbuild');
const { src, dest, parallel, series } = require('gulp');

const DIST = resolve(__dirname, 'dist');
const ENGINE = join(DIST, 'lib', 'index.js');
const MIGRATIONS = resolve(__dirname, 'lib', 'store', 'migrations');

/** What dist/ may require from outside itself: n8n provides n8n-workflow to community nodes. */
const PROVIDED = new Set(['n8n-workflow']);
/**
 * pg's optional native binding: pg requires it only when NODE_PG_FORCE_NATIVE is set or its
 * `native` property is read, and the store does neither.
 */
const OPTIONAL = new Set(['pg-native']);

function copyAssets() {
	return src(['nodes/**/*.{png,svg}', 'nodes/**/*.node.json', 'credentials/**/*.{png,svg}'], {
		base: '.',
		encoding: false,
	}).pipe(dest('dist'));
}

/** Every numbered migration file, by name, as lib/store/migrationFiles.ts reads them from disk. */
function readMigrations() {
	return Object.fromEntries(
		readdirSync(MIGRATIONS)
			.sort()
			.map((file) => [file, readFileSync(join(MIGRATIONS, file), 'utf8')]),
	);
}

const STYLE_SHEET = resolve(__dirname, 'lib', 'console', 'console.css');
const WORKFLOWS = resolve(__dirname, 'workflows');

/** Every bundled workflow file, by name, as lib/setup/bundledWorkflowFiles.ts reads them from disk. */
function readWorkflows() {
	return Object.fromEntries(
		readdirSync(WORKFLOWS)
			.filter((file) => file.endsWith('.json'))
			.sort()
			.map((file) => [file, readFileSync(join(WORKFLOWS, file), 'utf8')]),
	);
}

/**
 * The console's stylesheet with LF line ends, as lib/console/styleSheet.ts reads it: a browser
 * turns CRLF into LF before it hashes an inline style, so a CRLF checkout would otherwise send
 * a CSP hash that no longer matches and the console would render unstyled.
 */
const readStyleSheet = () => readFileSync(STYLE_SHEET, 'utf8').replace(/\r\n?/g, '\n');

/**
 * Replaces the modules that read the source tree with the text they read, at build time:
 * lib/store/migrationFiles (the numbered migrations), lib/console/styleSheet (the console's
 * stylesheet) and lib/setup/bundledWorkflowFiles (the bundled workflows Setup installs).
 */
const embedFiles = {
	name: 'embed-files',
	setup(build) {
		build.onLoad({ filter: /[\\/]lib[\\/]store[\\/]migrationFiles\.js$/ }, () => ({
			contents: `exports.migrationFiles = () => (${JSON.stringify(readMigrations())});`,
			loader: 'js',
			watchFiles: readdirSync(MIGRATIONS).map((file) => join(MIGRATIONS, file)),
		}));
		build.onLoad({ filter: /[\\/]lib[\\/]setup[\\/]bundledWorkflowFiles\.js$/ }, () => ({
			contents: `exports.bundledWorkflowFiles = () => (${JSON.stringify(readWorkflows())});`,
			loader: 'js',
			watchFiles: Object.keys(readWorkflows()).map((file) => join(WORKFLOWS, file)),
		}));
		build.onLoad({ filter: /[\\/]lib[\\/]console[\\/]styleSheet\.js$/ }, () => ({
			contents: `exports.styleSheet = () => ${JSON.stringify(readStyleSheet())};`,
			loader: 'js',
			watchFiles: [STYLE_SHEET],
		}));
	},
};

/** The license texts of the packages inside the bundle, which their licenses ask to keep. */
function writeNotices(metafile) {
	const packages = new Map();
	for (const input of Object.keys(metafile.inputs)) {
		const match = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
		if (!match) continue;
		const dir = join(input.slice(0, match.index + match[0].length));
		const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
		const license = readdirSync(dir).find((file) => /^(licen[cs]e|copying)/i.test(file));
		packages.set(`${manifest.name}@${manifest.version}`, {
			license: manifest.license,
			text: license ? readFileSync(join(dir, license), 'utf8').trim() : '',
		});
	}
	const sections = [...packages.entries()]
		.sort(([a], [b]) => a.localeCompare(b))
		.map(([name, { license, text }]) => `${name} (${license})\n\n${text}`);
	writeFileSync(
		join(DIST, 'lib', 'THIRD_PARTY_LICENSES.txt'),
		`dist/lib/index.js bundles these packages:\n\n${sections.join(`\n\n${'-'.repeat(72)}\n\n`)}\n`,
	);
}

async function bundleEngine() {
	const result = await esbuild.build({
		entryPoints: [ENGINE],
		outfile: ENGINE,
		allowOverwrite: true,
		bundle: true,
		platform: 'node',
		format: 'cjs',
		target: 'node20',
		external: [...PROVIDED, ...OPTIONAL],
		plugins: [embedFiles],
		sourcemap: true,
		sourcesContent: false,
		metafile: true,
		logLevel: 'warning',
	});
	// The bundle replaces tsc's output for the engine: nothing else in dist/lib is required.
	for (const entry of readdirSync(join(DIST, 'lib'), { withFileTypes: true })) {
		if (!['index.js', 'index.js.map'].includes(entry.name))
			rmSync(join(DIST, 'lib', entry.name), { recursive: true, force: true });
	}
	writeNotices(result.metafile);
}

function jsFiles(dir) {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) return jsFiles(path);
		return entry.name.endsWith('.js') ? [path] : [];
	});
}

/**
 * Fails the build when a file in dist/ requires a package that n8n does not provide (it would
 * need node_modules), or a relative path that is not in dist/ (a node importing the engine
 * other than through lib/index), and when the bundle does not carry every migration.
 */
async function checkDist() {
	const builtins = new Set(builtinModules);
	const problems = [];
	for (const file of jsFiles(DIST)) {
		const text = readFileSync(file, 'utf8');
		for (const [, request] of text.matchAll(/\brequire\(\s*["']([^"']+)["']\s*\)/g)) {
			const where = relative(__dirname, file);
			if (request.startsWith('.')) {
				const target = resolve(dirname(file), request);
				if (![target, `${target}.js`, join(target, 'index.js')].some((p) => existsSync(p)))
					problems.push(`${where} requires ${request}, which is not in dist/`);
				continue;
			}
			const name = request.startsWith('@')
				? request.split('/').slice(0, 2).join('/')
				: request.split('/')[0];
			if (request.startsWith('node:') || builtins.has(name)) continue;
			if (PROVIDED.has(name) || OPTIONAL.has(name)) continue;
			problems.push(`${where} requires ${request}, which the package does not ship`);
		}
	}
	if (readFileSync(ENGINE, 'utf8').includes('console.css'))
		problems.push('dist/lib/index.js reads console.css from disk instead of carrying it');
	// The page puts the stylesheet through its HTML escaping, and the CSP hash is of what the page
	// carries: a `>` selector or a quoted string would be escaped into a rule that silently fails.
	const escaped = readStyleSheet().match(/[&<>"']/);
	if (escaped)
		problems.push(
			`lib/console/console.css contains ${escaped[0]}, which the page escapes; write the rule without it`,
		);
	const expected = Object.keys(readMigrations()).filter((f) => /^\d{6}_.*\.sql$/.test(f)).length;
	const bundled = require(ENGINE).latestMigrationId();
	if (bundled !== expected)
		problems.push(
			`dist/lib/index.js carries ${bundled} migrations; lib/store/migrations has ${expected}`,
		);
	const workflows = Object.keys(readWorkflows());
	const carried = Object.keys(require(ENGINE).bundledWorkflowFiles());
	if (carried.join() !== workflows.join())
		problems.push(
			`dist/lib/index.js carries ${carried.length} bundled workflows; workflows/ has ${workflows.length}`,
		);
	if (problems.length)
		throw new Error(`dist/ is not what the package must ship:\n  ${problems.join('\n  ')}`);
}

exports['build:assets'] = copyAssets;
exports['build:engine'] = bundleEngine;
exports['build:check'] = checkDist;
exports.build = series(parallel(copyAssets, bundleEngine), checkDist);
