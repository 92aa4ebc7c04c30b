#!/usr/bin/env bash
# test.sh — run every test of mcpgate, on a fresh machine or a warm one.
#
# It installs what the tests need into git-ignored cache folders (Go
# modules through the Go proxy; Node 22, the official MCP conformance suite,
# the TypeScript SDK and the reference server from the npm registry, via
# scripts/peers.sh), then runs:
#   1. go vet, gofmt and staticcheck over every package;
#   2. the official conformance suite against one `mcpgate fixture`
#      serving both eras on one URL: --suite all of 0.1.16, and the
#      2025-11-25 and 2026-07-28 requirements of 0.2.0-alpha.12; each must
#      pass every check;
#   3. go test -race over every package (the conformance suite again, in
#      both modes, the TypeScript SDK client, the official Go SDK client),
#      then every score the suites gave there: the fixture's and the
#      reference server's, directly and through the gateway, and the
#      client scenarios' against the gateway's backend client;
#   4. the allocation budgets and counts, without the race detector (which allocates
#      on its own account, so they skip under it).
# A second run installs nothing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

eval "$(scripts/peers.sh env)"
export MCPGATE_REQUIRE_PEERS=1

echo "== go vet"
go mod download
go vet ./...

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then
    echo "not formatted by gofmt:" >&2
    echo "$unformatted" >&2
    exit 1
fi

echo "== staticcheck"
# Pinned, installed once into the ignored .cache/bin; a second run
# installs nothing. A deprecation that only a test peer's API carries is
# excepted in its file (lint:file-ignore), with the reason.
staticcheck_version=0.8.2
if ! .cache/bin/staticcheck -version 2>/dev/null | grep -q "($staticcheck_version)"; then
    GOBIN="$root/.cache/bin" go install "honnef.co/go/tools/cmd/staticcheck@v$staticcheck_version"
fi
.cache/bin/staticcheck ./...

echo "== conformance suites against mcpgate fixture (Streamable HTTP: both eras on one URL)"
mkdir -p .cache/bin
go build -o .cache/bin/mcpgate ./cmd/mcpgate
.cache/bin/mcpgate fixture --listen 127.0.0.1:0 2>.cache/fixture.log &
fixture_pid=$!
trap 'kill $fixture_pid 2>/dev/null || true' EXIT
url=
for _ in $(seq 1 100); do
    url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' .cache/fixture.log | head -n 1) && [ -n "$url" ] && break
    sleep 0.1
done
[ -n "$url" ] || { cat .cache/fixture.log >&2; echo "fixture did not start" >&2; exit 1; }
out=$(mktemp -d)
echo "== 0.1.16, --suite all (stateful sessions of the 2025 era)"
"$NODE22" "$CONFORMANCE" server --url "$url" --suite all -o "$out" | sed -n '/=== SUMMARY ===/,$p' | sed 's/^Total:/Conformance total:/'
echo "== 0.2.0-alpha.12, the 2025-11-25 requirements"
"$NODE22" "$CONFORMANCE_NEXT" server --url "$url" --requirements 2025-11-25 -o "$out/next" | grep '^Total:' | sed 's/^Total:/Conformance (2025-11-25 requirements) total:/'
echo "== 0.2.0-alpha.12, the 2026-07-28 requirements (the tasks extension included)"
"$NODE22" "$CONFORMANCE_NEXT" server --url "$url" --requirements 2026-07-28 -o "$out/2026" | grep '^Total:' | sed 's/^Total:/Conformance (2026-07-28 requirements) total:/'
kill $fixture_pid 2>/dev/null || true
wait $fixture_pid 2>/dev/null || true
trap - EXIT
rm -rf "$out"

echo "== go test -race"
scores=$(mktemp)
status=0
# Artifacts (the admin console's screenshots among them) are kept in the
# ignored .cache/test-artifacts, one folder per test.
artifacts="$root/.cache/test-artifacts"
rm -rf "$artifacts" && mkdir -p "$artifacts"
MCPGATE_SCOREBOARD=$scores go test -race -count=1 -artifacts -outputdir "$artifacts" ./... || status=$?
echo "== allocation budgets (without -race)"
go test -count=1 -run 'AllocationBudget|AllocatesNothing|CostsTheSame' ./internal/gateway ./internal/observe/audit ./internal/h1 || status=$?
echo "== test artifacts (the console's screenshots among them): .cache/test-artifacts"
echo "== the suites' scores in go test (direct, through the gateway, and the client scenarios)"
sort "$scores"
rm -f "$scores"
exit $status
