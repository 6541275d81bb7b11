#!/usr/bin/env bash
# `make packages`: the three packages, at the service's version, in dist/packages/:
#   notestream-client-<v>.tgz          the JavaScript client (clients/js; npm install it)
#   notestream-<v>.tgz                 the service itself, its `notestream` bin and notestream/testing (bun add it)
#   notestream-<v>-py3-none-any.whl    the Python client (clients/python; pip install it)
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(node -p 'require("./package.json").version')
rm -f dist/packages/notestream-*
mkdir -p dist/packages
bash scripts/build-js-client.sh --pack
npm pack --pack-destination dist/packages --silent >/dev/null
bash scripts/build-python.sh
ls -1 dist/packages
for f in "notestream-client-$version.tgz" "notestream-$version.tgz" "notestream-$version-py3-none-any.whl"; do
  [ -f "dist/packages/$f" ] || { echo "make packages: dist/packages/$f is missing" >&2; exit 1; }
done
