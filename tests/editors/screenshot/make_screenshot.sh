#!/usr/bin/env bash
# Renders docs/editors/img/neovim-chat.png: Neovim in a 120x35 tmux pane after a scripted turn.
# Needs tmux, aha and chromium (apt-get install -y tmux aha chromium).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
venv="$root/.venv/bin"
out="${1:-$root/docs/editors/img/neovim-chat.png}"
work="$(mktemp -d)"
keep="${KEEP_WORK:-}"
trap 'tmux kill-session -t agentls-shot 2>/dev/null || true; [ -n "${prov:-}" ] && kill "$prov" 2>/dev/null; [ -n "$keep" ] || rm -rf "$work"' EXIT

mkdir -p "$work/ws"
printf 'def greet(name):\n    return "Hello, " + name\n\n\nprint(greet("you"))\n' > "$work/ws/greet.py"
printf '# Demo\n\nThis project greets people.\n' > "$work/ws/README.md"
: > "$work/ws/.agentls.toml"

"$venv/python" -m agent.scripted --port 0 --script "$here/script.json" > "$work/provider.json" 2> "$work/provider.log" &
prov=$!
for _ in $(seq 100); do [ -s "$work/provider.json" ] && break; sleep 0.1; done
url="$("$venv/python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["openai_url"])' "$work/provider.json")"

env_args=(
  AGENTLS_NVIM_PLUGIN="$root/editors/nvim" AGENTLS_CMD="[\"$venv/agentls\", \"lsp\"]"
  AGENTLS_SCRIPTED_URL="$url" AGENTLS_TEST_KEY=sk-test AGENTLS_DATA_DIR="$work/data"
  XDG_CONFIG_HOME="$work/config" XDG_STATE_HOME="$work/state" SHOT_DONE="$work/done" SHOT_TRUECOLOR=1 SHOT_COLORSCHEME=habamax
)
tmux kill-session -t agentls-shot 2>/dev/null || true
tmux new-session -d -s agentls-shot -x 120 -y 35 -c "$work/ws" \
  "env ${env_args[*]@Q} TERM=tmux-256color $venv/nvim -i NONE -u $here/init.lua"
for _ in $(seq 200); do [ -e "$work/done" ] && break; sleep 0.1; done
[ -e "$work/done" ] || { echo "the turn did not finish" >&2; tmux capture-pane -p -t agentls-shot >&2; exit 1; }
sleep 0.5
tmux capture-pane -p -e -t agentls-shot > "$work/pane.ansi"

aha --black --title "agentls in Neovim" < "$work/pane.ansi" > "$work/pane.html"
# A monospace font and tight line height so the HTML looks like the terminal.
# The page takes Neovim's Normal background, which spans then leave out; the remaining backgrounds (window
# separator, status line) get 1px of vertical padding so they meet between rows.
bg="$(cat "$work/done")"
sed -i "s|background-color:$bg;||g" "$work/pane.html"
sed -i "s|<head>|<head><style>body{margin:0;padding:8px;background:$bg !important} pre{margin:0;font-family:'DejaVu Sans Mono',monospace;font-size:14px;line-height:1.2} pre span{padding:1px 0}</style>|" "$work/pane.html"
chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
  --disable-sync --no-first-run --user-data-dir="$work/chrome" --hide-scrollbars \
  --window-size=1030,606 --screenshot="$out" "file://$work/pane.html" 2> "$work/chrome.log" >/dev/null
ls -l "$out"
