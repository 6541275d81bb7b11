#!/usr/bin/env bash
# The JavaScript client (clients/js): its types generated from the service's OpenAPI document,
# compiled under strict TypeScript, and with --pack packed into dist/packages/ as
# notestream-client-<version>.tgz, the service's version.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(node -p 'require("./package.json").version')
client=$(node -p 'require("./clients/js/package.json").version')
if [ "$version" != "$client" ]; then
  echo "clients/js/package.json has version $client, the service $version: they go out together" >&2
  exit 1
fi
bun scripts/client-types.ts >/dev/null
rm -rf clients/js/dist
node_modules/.bin/tsc -p clients/js
if [ "${1:-}" = "--pack" ]; then
  mkdir -p dist/packages
  (cd clients/js && npm pack --pack-destination ../../dist/packages --silent)
fi
