#!/usr/bin/env bash
# The VS Code extension's whole check, from a clean clone (called by ./scripts/test):
#   npm ci → Chromium if missing (apt-get, when root) → npm test → npm run package.
# npm test = tsc --noEmit, esbuild bundles, mocha: unit tests, webview tests in
# headless Chromium (skipped with a message when there is no Chromium), and the
# wire test against the real `agentls lsp` (skipped with a message when the
# Python side is not importable; python from $AGENTLS_PYTHON, default ../.venv/bin/python).
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
if npm run --silent package >"$log.pkg" 2>&1; then
  tail -n 3 "$log.pkg" >&2
else
  cat "$log.pkg" >&2
  say "packaging failed"
  status=1
fi

passed=$(grep -Eo '^ +[0-9]+ passing' "$log" | grep -Eo '[0-9]+' | tail -1)
failed=$(grep -Eo '^ +[0-9]+ failing' "$log" | grep -Eo '[0-9]+' | tail -1)
skipped=$(grep -Eo '^ +[0-9]+ pending' "$log" | grep -Eo '[0-9]+' | tail -1)
rm -f "$log" "$log.pkg"
echo "vscode-extension: ${passed:-0} passed, ${failed:-0} failed, ${skipped:-0} skipped"
exit $status
