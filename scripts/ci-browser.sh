#!/usr/bin/env bash
# Browser tests of the dashboard: headless Chromium (Debian's chromium,
# driven by playwright-core; Playwright's own browser download is not
# used) against a real hub built from this tree, with real agents acting
# over REST. Screenshots go to test/browser/artifacts/.
#
#   scripts/ci-browser.sh
#
# Installs chromium with apt-get when it is missing, runs npm ci in
# test/browser, builds the hub and runs `node --test` (the hub is started
# by the tests on free loopback ports with a fresh data dir).
set -euo pipefail
cd "$(dirname "$0")/.."

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
  echo "ci-browser: installing chromium with apt-get" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/hub" ./cmd/hub

cd test/browser
npm ci --no-audit --no-fund --loglevel=error
HUB_BIN="$work/hub" CHROMIUM="$CHROMIUM" node --test --test-concurrency=1 dashboard.test.mjs board.test.mjs inbox.test.mjs spend.test.mjs
