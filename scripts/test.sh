#!/usr/bin/env bash
# `make test`: the whole suite on SQLite, then the unit and integration suites again on PostgreSQL
# (each app on a database of its own, test/helpers/harness.ts). Arguments go to the SQLite run only.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-chromium.sh
NOTESTREAM_TEST_DATABASE_URL="$(bash scripts/ensure-postgres.sh)"
export NOTESTREAM_TEST_DATABASE_URL
bun test --timeout 20000 "$@"
if [ $# -eq 0 ] && [ -n "$NOTESTREAM_TEST_DATABASE_URL" ]; then
  echo "== test/unit and test/integration again, on PostgreSQL"
  NOTESTREAM_DATABASE_URL="$NOTESTREAM_TEST_DATABASE_URL" bun test --timeout 20000 test/unit test/integration
fi
