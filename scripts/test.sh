#!/usr/bin/env bash
# `make test`: the whole suite on SQLite, then again on PostgreSQL (each app and each data dir on a
# database of its own: test/helpers/harness.ts, test/helpers/binary.ts). Arguments go to the SQLite
# run only.
#
# The PostgreSQL run leaves out:
# - scale-out, postgres-migrate and postgres-tls, which make PostgreSQL databases of their own and
#   so ran on it already in the first run;
# - the browser files that test pages and their scripts in Chromium (named below):
#   layout, accessibility, forms kept on refusal, autosave and drafts, consent, switching
#   workspaces, onboarding, the stream's watching cards, channels (with the Notify card and digests). What they meet of the database comes through routes that the
#   integration tests drive on PostgreSQL too, through the same handler (web, web-editor,
#   web-settings, web-workspaces, account, onboarding, billing, plans, oauth, snapshots,
#   follow-commit, channels, channel-lines, digests and the e2e follow), and a page's HTML and scripts are the same on either
#   database. Those that show what only a database decides stay on both: browser-board (the board's
#   rows and health come from each database's queries and the dead-man sweep) and browser-search
#   (each database has its own search engine and snippets).
# - python-client, js-client and packages, the client packages' tests: a client meets only the HTTP API, which the
#   other e2e files already drive on PostgreSQL.
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
      # Databases of their own, made on PostgreSQL in the first run.
      scale-out.test.ts | postgres-migrate.test.ts | postgres-tls.test.ts) ;;
      # Pages and their scripts in Chromium, the same on either database (above).
      browser.test.ts | browser-a11y.test.ts | browser-apps.test.ts | browser-auth.test.ts | browser-editor.test.ts) ;;
      browser-onboarding.test.ts | browser-plans.test.ts | browser-settings.test.ts | browser-teams.test.ts | browser-watch.test.ts) ;;
      browser-channels.test.ts) ;;
      # The Python client meets only the HTTP API (above).
      python-client.test.ts | js-client.test.ts | packages.test.ts) ;;
      *) e2e+=("$f") ;;
    esac
  done
  echo "== test/unit, test/integration and test/e2e again, on PostgreSQL"
  NOTESTREAM_DATABASE_URL="$NOTESTREAM_TEST_DATABASE_URL" bun test --timeout 20000 test/unit test/integration "${e2e[@]}"
fi
