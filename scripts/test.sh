#!/usr/bin/env bash
# `make test`: the whole suite on SQLite, then again on PostgreSQL (each app and each data dir on a
# database of its own: test/helpers/harness.ts, test/helpers/binary.ts). Arguments go to the SQLite
# run only.
#
# The PostgreSQL run leaves out only scale-out, postgres-migrate and postgres-tls, which make PostgreSQL databases
# of their own and so ran on it already in the first run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-chromium.sh
NOTESTREAM_TEST_DATABASE_URL="$(bash scripts/ensure-postgres.sh)"
export NOTESTREAM_TEST_DATABASE_URL
bun test --timeout 20000 "$@"
if [ $# -eq 0 ] && [ -n "$NOTESTREAM_TEST_DATABASE_URL" ]; then
  e2e=()
  for f in test/e2e/*.test.ts; do
    case "$(basename "$f")" in
      scale-out.test.ts | postgres-migrate.test.ts | postgres-tls.test.ts) ;;
      *) e2e+=("$f") ;;
    esac
  done
  echo "== test/unit, test/integration and test/e2e again, on PostgreSQL"
  NOTESTREAM_DATABASE_URL="$NOTESTREAM_TEST_DATABASE_URL" bun test --timeout 20000 test/unit test/integration "${e2e[@]}"
fi
