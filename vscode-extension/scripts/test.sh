#!/usr/bin/env bash
# The VS Code extension's whole check, from a clean clone (called by ./scripts/test):
#   npm ci → Chromium if missing (apt-get, when root) → npm test → npm run package.
# npm test = tsc --noEmit, esbuild bundles, mocha: unit tests, webview tests in
# headless Chromium (skipped with a message when there is no Chromium), and the
# wire test against the real `agentls lsp` (skipped with a message when the
# Python side is not importable; python from $AGENTLS_PYTHON, default ../.venv/bin/python).
# Then the real-VS-Code suite (npm run test:workbench): the .vsix just packaged, installed into
# code-server (VS Code's workbench; ../scripts/editors/install-code-server caches it) and driven in
# headless Chromium. AGENTLS_REAL_EDITORS=skip skips it; =require makes a missing piece a failure.
set -uo pipefail
cd "$(dirname "$0")/.."

say() { echo "vscode-extension: $*" >&2; }

if ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "npm not found; installing nodejs and npm with apt-get"
    (apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null) || true
  fi
  command -v npm >/dev/null 2>&1 || { say "npm is required (Node 20+)"; exit 1; }
fi

say "npm ci"
npm ci --no-audit --no-fund --loglevel=error >/dev/null || { say "npm ci failed"; exit 1; }

find_chromium() {
  for c in "${CHROMIUM_PATH:-}" /usr/lib/chromium/chromium /usr/bin/chromium /usr/bin/chromium-browser; do
    [ -n "$c" ] && [ -x "$c" ] && { echo "$c"; return 0; }
  done
  return 1
}
if ! find_chromium >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing chromium with apt-get (for the webview tests)"
    (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) || say "could not install chromium"
  fi
fi
if CHROMIUM_PATH="$(find_chromium)"; then
  export CHROMIUM_PATH
else
  say "no Chromium: the webview tests will be skipped"
fi

status=0
log="$(mktemp)"
npm test 2>&1 | tee "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

say "npm run package"
packaged=0
rm -f agentls-*.vsix
if npm run --silent package >"$log.pkg" 2>&1; then
  tail -n 3 "$log.pkg" >&2
  packaged=1
else
  cat "$log.pkg" >&2
  say "packaging failed"
  status=1
fi

if [ "${AGENTLS_REAL_EDITORS:-auto}" = skip ]; then
  say "real VS Code suite skipped (AGENTLS_REAL_EDITORS=skip)"
elif [ $packaged -eq 1 ]; then
  say "real VS Code: the .vsix in code-server, driven in headless Chromium"
  start=$(date +%s)
  AGENTLS_VSIX="$(ls "$PWD"/agentls-*.vsix | head -1)" npm run --silent test:workbench 2>&1 | tee -a "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  say "real VS Code suite took $(( $(date +%s) - start )) s"
else
  say "real VS Code suite not run: there is no .vsix"
  [ "${AGENTLS_REAL_EDITORS:-auto}" = require ] && status=1
fi

count() { grep -Eo "^ +[0-9]+ $1" "$log" | grep -Eo '[0-9]+' | awk '{ s += $1 } END { print s + 0 }'; }
passed=$(count passing)
failed=$(count failing)
skipped=$(count pending)
rm -f "$log" "$log.pkg"
echo "vscode-extension: ${passed:-0} passed, ${failed:-0} failed, ${skipped:-0} skipped"
exit $status
