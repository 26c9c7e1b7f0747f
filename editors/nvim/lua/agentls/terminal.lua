-- agentls.terminal: `agent/terminal/create|output|waitForExit|kill|release` (the shapes of ACP `terminal/*`),
-- run with `vim.system`. Output is kept within `outputByteLimit` (the oldest bytes go first, cut on a
-- UTF-8 character boundary). Optionally each command is mirrored into a terminal split.
--
-- Every function takes the request params and returns `result` or `nil, error` (a JSON-RPC error table).

local M = {}

local opts = { mirror = false, height = 12, default_byte_limit = 1024 * 1024, kill_grace_ms = 2000 }
local terms = {} -- terminalId -> entry
local released = {} -- terminalId -> output, for the chat to show after release (the last 50)
local released_order = {}
local seq = 0

local SIGNALS = {
  [1] = "SIGHUP",
  [2] = "SIGINT",
  [3] = "SIGQUIT",
  [6] = "SIGABRT",
  [9] = "SIGKILL",
  [13] = "SIGPIPE",
  [14] = "SIGALRM",
  [15] = "SIGTERM",
}

function M.configure(o)
  opts = vim.tbl_extend("force", opts, o or {})
end

local function invalid(message)
  return nil, { code = -32602, message = message }
end

--- Keep the last `limit` bytes of `s`, starting on a UTF-8 character (never inside a multi-byte one).
function M.keep_tail(s, limit)
  if #s <= limit then
    return s, false
  end
  if limit <= 0 then
    return "", true
  end
  local start = #s - limit + 1
  while start <= #s do
    local b = s:byte(start)
    if b < 0x80 or b >= 0xC0 then
      break
    end
    start = start + 1
  end
  return s:sub(start), true
end

local function append(entry, data)
  entry.out = entry.out .. data
  if #entry.out > entry.limit then
    entry.out = M.keep_tail(entry.out, entry.limit)
    entry.truncated = true
  end
end

local function mirror_open(entry)
  local buf = vim.api.nvim_create_buf(false, true)
  local ok, chan = pcall(vim.api.nvim_open_term, buf, {})
  if not ok then
    return
  end
  entry.mirror = { buf = buf, chan = chan }
  local win = M.mirror_win
  if not (win and vim.api.nvim_win_is_valid(win)) then
    local from = vim.api.nvim_get_current_win()
    vim.cmd("botright " .. opts.height .. "split")
    win = vim.api.nvim_get_current_win()
    M.mirror_win = win
    vim.api.nvim_set_current_win(from)
  end
  vim.api.nvim_win_set_buf(win, buf)
  vim.api.nvim_chan_send(chan, "\27[2m$ " .. entry.label .. "\27[0m\r\n")
end

local function mirror_send(entry, data)
  local m = entry.mirror
  if m and vim.api.nvim_buf_is_valid(m.buf) then
    pcall(vim.api.nvim_chan_send, m.chan, (data:gsub("\r?\n", "\r\n")))
  end
end

local function kill_group(entry, sig)
  if entry.exit or not entry.proc then
    return
  end
  -- The process leads its own group (detach = true): signal the whole group, then the process.
  pcall(vim.uv.kill, -entry.proc.pid, sig)
  pcall(function()
    entry.proc:kill(sig)
  end)
end

local function get(params)
  local id = type(params) == "table" and params.terminalId or nil
  if type(id) ~= "string" then
    return nil, "'terminalId' is required"
  end
  local entry = terms[id]
  if not entry then
    return nil, ("unknown terminal %q (it was released or never created)"):format(id)
  end
  return entry
end

--- agent/terminal/create {sessionId, command, args?, env?, cwd?, outputByteLimit?} -> {terminalId}
--- With no `args`, `command` is a shell command line run with `sh -c`.
function M.create(params, default_cwd)
  if type(params) ~= "table" or type(params.command) ~= "string" or params.command == "" then
    return invalid("agent/terminal/create: 'command' is required (a string)")
  end
  local argv
  local args = params.args
  if type(args) == "table" and #args > 0 then
    argv = { params.command }
    for _, a in ipairs(args) do
      argv[#argv + 1] = tostring(a)
    end
  else
    argv = { "/bin/sh", "-c", params.command }
  end
  local cwd = params.cwd
  if cwd == nil or cwd == vim.NIL then
    cwd = default_cwd or vim.fn.getcwd()
  end
  if vim.fn.isdirectory(cwd) ~= 1 then
    return invalid(("agent/terminal/create: cwd %s is not a directory"):format(cwd))
  end
  local env = {}
  for _, e in ipairs(type(params.env) == "table" and params.env or {}) do
    if type(e) == "table" and type(e.name) == "string" then
      env[e.name] = tostring(e.value or "")
    end
  end
  local limit = tonumber(params.outputByteLimit)
  if limit == nil or limit < 0 then
    limit = opts.default_byte_limit
  end

  seq = seq + 1
  local id = ("nvim-term-%d"):format(seq)
  local label = type(args) == "table" and #args > 0 and table.concat(argv, " ") or params.command
  local entry = {
    id = id,
    label = label,
    out = "",
    truncated = false,
    limit = limit,
    exit = nil,
    waiters = {},
  }
  if opts.mirror then
    mirror_open(entry)
  end
  local function on_data(_, data)
    if data then
      append(entry, data)
      if entry.mirror then
        vim.schedule(function()
          mirror_send(entry, data)
        end)
      end
    end
  end
  local ok, proc = pcall(vim.system, argv, {
    cwd = cwd,
    env = next(env) and env or nil,
    stdout = on_data,
    stderr = on_data,
    text = false,
    detach = true,
  }, function(obj)
    local sig = obj.signal or 0
    entry.exit = {
      exitCode = sig ~= 0 and vim.NIL or obj.code,
      signal = sig ~= 0 and (SIGNALS[sig] or tostring(sig)) or vim.NIL,
    }
    vim.schedule(function()
      if entry.mirror then
        local how = sig ~= 0 and ("killed by " .. entry.exit.signal) or ("exit code " .. obj.code)
        mirror_send(entry, "\n\27[2m[process ended: " .. how .. "]\27[0m\n")
      end
      local waiters = entry.waiters
      entry.waiters = {}
      for _, w in ipairs(waiters) do
        w(entry.exit)
      end
    end)
  end)
  if not ok then
    return nil, { code = -32603, message = ("agent/terminal/create: could not start %q: %s"):format(label, proc) }
  end
  entry.proc = proc
  terms[id] = entry
  return { terminalId = id }
end

--- agent/terminal/output -> {output, truncated, exitStatus?}
function M.output(params)
  local entry, problem = get(params)
  if not entry then
    return invalid("agent/terminal/output: " .. problem)
  end
  local result = { output = entry.out, truncated = entry.truncated }
  if entry.exit then
    result.exitStatus = entry.exit
  end
  return result
end

--- agent/terminal/waitForExit -> {exitCode, signal}; `await(start)` suspends the handler's coroutine.
function M.wait_for_exit(params, await)
  local entry, problem = get(params)
  if not entry then
    return invalid("agent/terminal/waitForExit: " .. problem)
  end
  if entry.exit then
    return entry.exit
  end
  return await(function(resolve)
    table.insert(entry.waiters, resolve)
  end)
end

--- agent/terminal/kill: stop the process (SIGTERM, then SIGKILL after a grace period); output is kept.
function M.kill(params)
  local entry, problem = get(params)
  if not entry then
    return invalid("agent/terminal/kill: " .. problem)
  end
  kill_group(entry, "sigterm")
  if not entry.exit then
    vim.defer_fn(function()
      kill_group(entry, "sigkill")
    end, opts.kill_grace_ms)
  end
  return vim.empty_dict()
end

--- agent/terminal/release: kill if still running, and forget the terminal.
function M.release(params)
  local entry, problem = get(params)
  if not entry then
    return invalid("agent/terminal/release: " .. problem)
  end
  kill_group(entry, "sigkill")
  terms[entry.id] = nil
  released[entry.id] = entry.out
  table.insert(released_order, entry.id)
  if #released_order > 50 then
    released[table.remove(released_order, 1)] = nil
  end
  return vim.empty_dict()
end

--- The output kept for a terminal, live or recently released (nil when unknown).
function M.peek(id)
  local entry = terms[id]
  if entry then
    return entry.out
  end
  return released[id]
end

--- Kill every running terminal (on exit).
function M.kill_all()
  for _, entry in pairs(terms) do
    kill_group(entry, "sigkill")
  end
end

--- Ids of the live (unreleased) terminals, for tests and :checkhealth-like listings.
function M.list()
  local ids = vim.tbl_keys(terms)
  table.sort(ids)
  return ids
end

return M
