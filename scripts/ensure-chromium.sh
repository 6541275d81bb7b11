#!/usr/bin/env bash
# The browser tests drive Debian's Chromium with playwright-core. Installs it when missing and
# this is a Debian machine we may install on (root); otherwise says so, and those tests skip.
set -u
command -v chromium >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "chromium not found: installing Debian's chromium for the browser tests"
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null && exit 0
fi
echo "warning: chromium is not installed and could not be installed here; the browser tests will be skipped" >&2
exit 0
