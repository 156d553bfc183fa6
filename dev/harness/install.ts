import { execFile } from 'node:child_process';
import {
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	rmSync,
	statSync,
	writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CACHE_DIR, REPO_ROOT } from './paths';

/**
 * Installing n8n and this package as users do: a pinned n8n into the cache
 * (scripts/install-n8n.sh), this package packed once (npm pack) and installed into a user
 * folder's ~/.n8n/nodes.
 */
const run = promisify(execFile);

export interface N8nInstall {
	version: string;
	node: string;
	n8n: string;
}

export async function installN8n(version: string): Promise<N8nInstall> {
	const { stdout } = await run('bash', [join(REPO_ROOT, 'scripts', 'install-n8n.sh'), version], {
		maxBuffer: 16 * 1024 * 1024,
		env: { ...process.env, RELIABILITY_CACHE_DIR: CACHE_DIR },
	});
	const line = (key: string): string => {
		const found = stdout.split('\n').find((l) => l.startsWith(`${key}=`));
		if (!found) throw new Error(`install-n8n.sh printed no ${key}=: ${stdout}`);
		return found.slice(key.length + 1);
	};
	return { version, node: line('NODE'), n8n: line('N8N') };
}

/**
 * Packs the built package once (npm pack of dist/ and workflows/), as a user would receive it,
 * into a folder of this run's own: runs from other clones share the cache, and a tarball of the
 * same name and version from one of them must not replace this one.
 */
export async function packPackage(): Promise<string> {
	mkdirSync(join(CACHE_DIR, 'packs'), { recursive: true });
	const outDir = mkdtempSync(join(CACHE_DIR, 'packs', 'run-'));
	const { stdout } = await run(
		'npm',
		['pack', '--silent', '--ignore-scripts', '--pack-destination', outDir],
		{ cwd: REPO_ROOT },
	);
	const file = stdout.trim().split('\n').pop()!;
	return join(outDir, file);
}

/** Installs the package tarball into `<userFolder>/.n8n/nodes`, where n8n loads community nodes from. */
export async function installPackageInto(userFolder: string, tarball: string): Promise<void> {
	const nodesDir = join(userFolder, '.n8n', 'nodes');
	mkdirSync(nodesDir, { recursive: true });
	if (!existsSync(join(nodesDir, 'package.json'))) {
		writeFileSync(
			join(nodesDir, 'package.json'),
			JSON.stringify({ name: 'installed-nodes', private: true, dependencies: {} }, null, 2),
		);
	}
	// n8n provides n8n-workflow itself, so the peer dependency is not installed (as n8n does).
	await run(
		'npm',
		[
			'install',
			'--no-audit',
			'--no-fund',
			'--omit=dev',
			'--legacy-peer-deps',
			'--loglevel=error',
			tarball,
		],
		{ cwd: nodesDir, maxBuffer: 16 * 1024 * 1024 },
	);
}

/** Removes user folders and packed tarballs of earlier runs that were left behind. */
export function cleanOldRuns(maxAgeMs = 6 * 60 * 60_000): void {
	for (const dir of [CACHE_DIR, join(CACHE_DIR, 'packs')]) {
		if (!existsSync(dir)) continue;
		for (const entry of readdirSync(dir)) {
			if (!entry.startsWith('run-')) continue;
			const path = join(dir, entry);
			if (Date.now() - statSync(path).mtimeMs > maxAgeMs)
				rmSync(path, { recursive: true, force: true });
		}
	}
}
