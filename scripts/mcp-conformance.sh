#!/usr/bin/env bash
# `make mcp-conformance`: the official MCP conformance suite (server mode) and the MCP Inspector's CLI
# against notestream, hosted (/mcp) and over stdio (`notestream mcp`); exits 1 when anything that
# applies fails. The suite and the Inspector are installed with npm into .tools/mcp-conformance/ on
# the first run. The service runs from source; MCP_CONFORMANCE_BIN=dist/notestream runs a built binary
# (make build) instead. What applies and why: docs/MCP-CONFORMANCE.md.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v npm >/dev/null || { echo "mcp-conformance: npm not found (it installs the conformance suite and the Inspector)" >&2; exit 2; }
command -v node >/dev/null || { echo "mcp-conformance: node not found (the Inspector's v1 CLI runs on it)" >&2; exit 2; }
BUN=$(command -v bun || echo "$PWD/.tools/node_modules/.bin/bun")
[ -x "$BUN" ] || { echo "mcp-conformance: bun not found: run make install first" >&2; exit 2; }
[ -f node_modules/.installed ] || [ -d node_modules/elysia ] || "$BUN" install --frozen-lockfile

exec "$BUN" scripts/mcp-conformance/main.ts "$@"
