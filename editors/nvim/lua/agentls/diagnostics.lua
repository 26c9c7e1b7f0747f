-- agentls.diagnostics: `agent/diagnostics`, the problems Neovim shows (vim.diagnostic.get), as LSP
-- Diagnostics, after the buffer's linters and language servers have caught up with the agent's edit.
--
-- Settling: a buffer counts as settled when a DiagnosticChanged arrived at its current changedtick and
-- nothing more arrived for QUIET_MS. The wait is bounded by the request's settleMs (and
-- config.diagnostics.settle_ms), and by UNKNOWN_MS for a filetype that never had a diagnostic here (a
-- plain-text buffer has nothing to wait for).

local M = {}

M.QUIET_MS = 150
M.UNKNOWN_MS = 400
M.MAX_PER_FILE = 200

local reported = {} -- bufnr -> { tick = changedtick at the last DiagnosticChanged, at = vim.uv.now() }
local filetypes = {} -- filetypes some linter or language server reports on

function M.on_changed(ev)
  local buf = ev.buf
  if not buf or not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  reported[buf] = { tick = vim.api.nvim_buf_get_changedtick(buf), at = vim.uv.now() }
  local ft = vim.bo[buf].filetype
  if ft ~= "" then -- something reports diagnostics for this filetype (even an empty set)
    filetypes[ft] = true
  end
end

local function settled(buf)
  local r = reported[buf]
  return r ~= nil and r.tick == vim.api.nvim_buf_get_changedtick(buf) and vim.uv.now() - r.at >= M.QUIET_MS
end

--- The loaded buffer of a file URI, or nil (no buffer is created for a file that is not open).
local function buffer_of(uri)
  local ok, name = pcall(vim.uri_to_fname, uri)
  if not ok then
    return nil
  end
  local buf = vim.fn.bufnr(name)
  if buf == -1 or not vim.api.nvim_buf_is_loaded(buf) then
    return nil
  end
  return buf
end

--- Wait (suspending the handler's coroutine through `await`) until every buffer is settled or time is up.
local function settle(bufs, limit_ms, await)
  if limit_ms <= 0 or #bufs == 0 then
    return
  end
  local known = false
  for _, buf in ipairs(bufs) do
    known = known or filetypes[vim.bo[buf].filetype] == true
  end
  local deadline = vim.uv.now() + (known and limit_ms or math.min(limit_ms, M.UNKNOWN_MS))
  local function all_settled()
    for _, buf in ipairs(bufs) do
      if vim.api.nvim_buf_is_valid(buf) and not settled(buf) then
        return false
      end
    end
    return true
  end
  while not all_settled() and vim.uv.now() < deadline do
    await(function(resolve)
      vim.defer_fn(function()
        resolve(true)
      end, 25)
    end)
  end
end

local function wire(d)
  local out = {
    range = {
      start = { line = d.lnum, character = d.col },
      ["end"] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col },
    },
    severity = d.severity or 1, -- vim.diagnostic.severity: ERROR 1 .. HINT 4, as LSP
    message = d.message,
  }
  if d.source and d.source ~= "" then
    out.source = d.source
  end
  if d.code ~= nil and d.code ~= "" then
    out.code = tostring(d.code)
  end
  return out
end

--- The agent/diagnostics answer. `await` suspends the request handler (agentls.handlers.await).
function M.answer(params, await, cfg)
  local uris = type(params.uris) == "table" and params.uris or {}
  local settle_ms = tonumber(params.settleMs) or 0
  local cap = cfg and cfg.diagnostics and cfg.diagnostics.settle_ms
  if cap then
    settle_ms = math.min(settle_ms, cap)
  end
  local bufs = {}
  for _, uri in ipairs(uris) do
    local buf = type(uri) == "string" and buffer_of(uri) or nil
    if buf then
      bufs[#bufs + 1] = buf
    end
  end
  settle(bufs, math.min(settle_ms, 10000), await)
  local out = {}
  for _, uri in ipairs(uris) do
    if type(uri) == "string" then
      local buf = buffer_of(uri)
      local list = {}
      if buf then
        local found = vim.diagnostic.get(buf)
        table.sort(found, function(a, b)
          if (a.severity or 1) ~= (b.severity or 1) then
            return (a.severity or 1) < (b.severity or 1)
          end
          return a.lnum < b.lnum
        end)
        for i, d in ipairs(found) do
          if i > M.MAX_PER_FILE then
            break
          end
          list[#list + 1] = wire(d)
        end
      end
      out[#out + 1] = { uri = uri, diagnostics = list }
    end
  end
  return { diagnostics = out }
end

return M
