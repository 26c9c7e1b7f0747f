-- agentls.commands: the user commands and the turn lifecycle.
--
--   :AgentAsk [text]     (with a range, :'<,'>AgentAsk: the selection goes along as the turn's context)
--   :AgentSteer text     :AgentStop     :AgentCompact [focus]     :AgentUndo [n]
--   :AgentSessions       :AgentNew      :AgentChat     :AgentContext [on|off]
--
-- :AgentAsk /<Tab> completes the slash commands (agent/listCommands: command files, skills, /memory, MCP
-- prompts); `:AgentAsk /review app.py` runs one (docs/workflows.md).

local chat = require("agentls.chat")
local render = require("agentls.render")
local client_mod = require("agentls.client")

local M = {}

local running = {} -- sessionId -> { client, id }
local queue = {} -- turns asked for while one was running: { instruction, selection }

local function cfg()
  return require("agentls").get_config()
end

local function notify(msg, level)
  vim.notify("agentls: " .. msg, level or vim.log.levels.INFO)
end

--- `fn(client, sessionId)` with the session shown in the chat (created on first use).
local function with_session(fn)
  client_mod.with_session(cfg(), function(client, sid)
    if chat.shown_session() ~= sid then
      chat.show_session(sid)
      chat.state().opts.root = client_mod.root(client)
    end
    fn(client, sid)
  end)
end

--- The current session without creating one; nil (and a message) when there is none.
local function current(what)
  local clients = vim.lsp.get_clients({ name = client_mod.name })
  for _, c in ipairs(clients) do
    local sid = client_mod.session(c)
    if sid then
      return c, sid
    end
  end
  notify("no session to " .. what .. " yet; start with :AgentAsk", vim.log.levels.WARN)
end

---------------------------------------------------------------------------------------------------------------
-- Prompts

--- The selection of a command run with a range (visual or typed), or nil.
function M.selection(opts)
  if not opts or (opts.range or 0) == 0 then
    return nil
  end
  local buf = vim.api.nvim_get_current_buf()
  local l1, l2 = opts.line1, opts.line2
  local text
  local vs, ve = vim.fn.getpos("'<"), vim.fn.getpos("'>")
  if vim.fn.visualmode() == "v" and vs[2] == l1 and ve[2] == l2 and vim.fn.exists("*getregion") == 1 then
    text = table.concat(vim.fn.getregion(vs, ve, { type = "v" }), "\n")
  else
    text = table.concat(vim.api.nvim_buf_get_lines(buf, l1 - 1, l2, false), "\n")
  end
  local name = vim.api.nvim_buf_get_name(buf)
  -- LSP positions (0-based): the characters of a charwise selection, else whole lines.
  local start, finish = { line = l1 - 1, character = 0 }, { line = l2, character = 0 }
  if vim.fn.visualmode() == "v" and vs[2] == l1 and ve[2] == l2 then
    start = { line = l1 - 1, character = math.max(0, vs[3] - 1) }
    finish = { line = l2 - 1, character = ve[3] }
  end
  return {
    uri = vim.uri_from_bufnr(buf),
    file = name,
    path = name ~= "" and vim.fn.fnamemodify(name, ":.") or "[No Name]",
    text = text,
    line1 = l1,
    line2 = l2,
    range = { start = start, ["end"] = finish },
    filetype = vim.bo[buf].filetype,
  }
end

--- The active file (the current buffer when it is a file), as agent/turn `context.activeFile`.
function M.active_file()
  local buf = vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(buf)
  if name == "" or vim.bo[buf].buftype ~= "" then
    return nil
  end
  local cursor = vim.api.nvim_win_get_cursor(0)
  return { path = name, languageId = vim.bo[buf].filetype, cursor = { line = cursor[1] - 1, character = cursor[2] } }
end

--- The agent/turn `context` for a prompt: the selection (when asked with a range), and the active file
--- (with a range, or always when `context.active_file` is on). nil when there is nothing to send.
function M.build_context(sel, active)
  local ctx = {}
  if sel then
    ctx.selection = { path = sel.file ~= "" and sel.file or sel.path, languageId = sel.filetype, text = sel.text,
      range = sel.range }
  end
  if active then
    ctx.activeFile = active
  end
  return next(ctx) and ctx or nil
end

--- The agent/turn prompt: the instruction (the selection travels as the turn's `context`).
function M.build_prompt(instruction)
  return instruction
end

local function shown_text(instruction, sel)
  if not sel then
    return instruction
  end
  return ("%s\n[selection: %s:%d-%d]"):format(instruction, sel.path, sel.line1, sel.line2)
end

---------------------------------------------------------------------------------------------------------------
-- Turns

local function announce(result, err)
  if not cfg().notify_answer then
    return
  end
  if err then
    notify(err.message or tostring(err), vim.log.levels.ERROR)
    return
  end
  result = result or {}
  if type(result.error) == "table" then
    notify(result.error.message or "the turn failed", vim.log.levels.ERROR)
  elseif result.interrupted then
    notify("interrupted", vim.log.levels.WARN)
  elseif type(result.finalResponse) == "string" and result.finalResponse ~= "" then
    local text = result.finalResponse
    local lines = vim.split(text, "\n", { plain = true })
    if #lines > 3 then
      text = table.concat(vim.list_slice(lines, 1, 3), "\n") .. "\n…"
    end
    if #text > 300 then
      text = vim.fn.strcharpart(text, 0, 300) .. "…"
    end
    notify(text)
  end
end

local start_next

local function run_turn(client, sid, instruction, sel, active)
  chat.apply_state(function(st)
    render.begin_turn(st, shown_text(instruction, sel))
  end)
  chat.flush()
  chat.set_status("running")
  local params = { sessionId = sid, prompt = M.build_prompt(instruction) }
  local context = M.build_context(sel, active)
  if context then
    params.context = context
  end
  local id = client_mod.request(client, "agent/turn", params, function(err, result)
    running[sid] = nil
    chat.apply_state(function(st)
      render.end_turn(st, result, err)
    end)
    chat.flush()
    chat.set_status(nil)
    announce(result, err)
    M.last = { sessionId = sid, result = result, error = err }
    vim.api.nvim_exec_autocmds("User", {
      pattern = "AgentlsTurnDone",
      modeline = false,
      data = { sessionId = sid, result = result, error = err },
    })
    start_next(client, sid)
  end)
  if id then
    running[sid] = { client = client, id = id }
  end
end

start_next = function(client, sid)
  local nxt = table.remove(queue, 1)
  if nxt then
    run_turn(client, sid, nxt[1], nxt[2], nxt[3])
  end
end

--- Ask the agent (a new turn in the current session). `sel` is a selection from M.selection().
function M.ask(instruction, sel)
  if type(instruction) ~= "string" or vim.trim(instruction) == "" then
    return
  end
  -- The file the user is in, taken before the chat window takes the focus.
  local active = sel and sel.active or nil
  if not active and (sel or cfg().context.active_file) then
    active = M.active_file()
  end
  chat.open()
  with_session(function(client, sid)
    if running[sid] then
      table.insert(queue, { instruction, sel, active })
      chat.apply_state(function(st)
        render.notice(st, "queued: " .. instruction .. " (use :AgentSteer to steer the running turn)")
      end)
      return
    end
    run_turn(client, sid, instruction, sel, active)
  end)
end

--- The server of `client_id` exited: its turns will never answer.
function M.client_exited(client_id, code, signal)
  local lost = false
  for sid, r in pairs(running) do
    if r.client.id == client_id then
      running[sid] = nil
      lost = true
    end
  end
  queue = {}
  chat.set_status(nil)
  if lost or (code and code ~= 0) then
    local how = (signal and signal ~= 0) and ("signal " .. signal) or ("exit code " .. tostring(code))
    chat.apply_state(function(st)
      render.notice(st, "✗ the agentls server stopped (" .. how .. "); see :LspLog", "error")
    end)
  end
end

function M.is_running(sid)
  if sid then
    return running[sid] ~= nil
  end
  return next(running) ~= nil
end

--- Steer the running turn (or start a new one when none runs).
function M.steer(text)
  if type(text) ~= "string" or vim.trim(text) == "" then
    notify("usage: :AgentSteer <text>", vim.log.levels.WARN)
    return
  end
  local client, sid = current("steer")
  if not client then
    return
  end
  client_mod.request(client, "agent/steer", { sessionId = sid, text = text }, function(err, result)
    if err then
      notify("steer failed: " .. (err.message or ""), vim.log.levels.ERROR)
      return
    end
    local outcome = type(result) == "table" and result.outcome or "?"
    chat.apply_state(function(st)
      if outcome == "startedNewTurn" then
        render.begin_turn(st, text)
      else
        render.notice(st, "↪ steer (" .. tostring(outcome) .. "): " .. text)
      end
    end)
  end)
end

--- Interrupt the running turn.
function M.stop()
  local client, sid = current("stop")
  if not client then
    return
  end
  queue = {}
  client_mod.request(client, "agent/interrupt", { sessionId = sid }, function(err, result)
    if err then
      notify("interrupt failed: " .. (err.message or ""), vim.log.levels.ERROR)
    elseif not (type(result) == "table" and result.interrupted) then
      notify("nothing is running")
    end
  end)
end

--- Compact the session's context, optionally keeping a focus.
function M.compact(focus)
  local client, sid = current("compact")
  if not client then
    return
  end
  local params = { sessionId = sid }
  if focus and vim.trim(focus) ~= "" then
    params.focus = focus
  end
  chat.open()
  client_mod.request(client, "agent/compress", params, function(err, result)
    if err then
      chat.apply_state(function(st)
        render.notice(st, "✗ compaction failed: " .. (err.message or ""), "error")
      end)
      notify("compaction failed: " .. (err.message or ""), vim.log.levels.ERROR)
      return
    end
    chat.apply_state(function(st)
      render.compacted(st, result)
    end)
    chat.flush()
    if type(result) == "table" and result.tokensBefore then
      notify(("context compacted: %s → %s tokens"):format(render.short_number(result.tokensBefore),
        render.short_number(result.tokensAfter)))
    end
    M.last_compact = result
  end)
end

--- Undo the file edits of the last `n` turns.
function M.undo(n)
  local client, sid = current("undo")
  if not client then
    return
  end
  local turns = tonumber(n) or 1
  client_mod.request(client, "agent/undo", { sessionId = sid, turns = turns }, function(err, result)
    if err then
      notify("undo failed: " .. (err.message or ""), vim.log.levels.ERROR)
      return
    end
    local files = type(result) == "table" and type(result.restoredFiles) == "table" and result.restoredFiles or {}
    local root = chat.state().opts.root
    local names = vim.tbl_map(function(f)
      return render.relpath(root, type(f) == "table" and (f.path or f.uri) or f)
    end, files)
    local text = #names > 0 and ("↶ undid %d turn(s): %s"):format(turns, table.concat(names, ", "))
      or "↶ nothing to undo"
    chat.apply_state(function(st)
      render.notice(st, text)
    end)
    notify(text)
  end)
end

--- A new session in the chat.
function M.new_session()
  local client = client_mod.get(cfg())
  if not client then
    return
  end
  client_mod.when_ready(client, function()
    client_mod.request(client, "agent/newSession", { cwd = client_mod.root(client) }, function(err, result)
      if err or type(result) ~= "table" then
        notify("agent/newSession failed: " .. (err and err.message or "?"), vim.log.levels.ERROR)
        return
      end
      client_mod.set_session(client, result.sessionId)
      chat.show_session(result.sessionId)
      chat.reset({ root = client_mod.root(client) })
      chat.open()
      notify("new session")
    end)
  end)
end

--- Load a stored session into the chat (its history replays as agent/update).
function M.load_session(client, session_id, title, done)
  chat.show_session(session_id)
  chat.reset({ root = client_mod.root(client) })
  chat.state().title = title
  chat.open()
  client_mod.request(client, "agent/loadSession", { sessionId = session_id }, function(err, result)
    if err then
      notify("could not load the session: " .. (err.message or ""), vim.log.levels.ERROR)
    else
      client_mod.set_session(client, session_id)
    end
    chat.flush()
    if done then
      done(err, result)
    end
  end)
end

--- Pick a stored session with vim.ui.select and load it.
function M.sessions()
  local client = client_mod.get(cfg())
  if not client then
    return
  end
  client_mod.when_ready(client, function()
    client_mod.request(client, "agent/listSessions", { cwd = client_mod.root(client) }, function(err, result)
      if err then
        notify("listSessions failed: " .. (err.message or ""), vim.log.levels.ERROR)
        return
      end
      local sessions = type(result) == "table" and result.sessions or {}
      if #sessions == 0 then
        notify("no stored sessions for " .. client_mod.root(client))
        return
      end
      vim.ui.select(sessions, {
        prompt = "agentls sessions",
        kind = "agentls.session",
        format_item = function(s)
          local title = (type(s.title) == "string" and s.title ~= "") and s.title or "(untitled)"
          return ("%s  %s"):format(tostring(s.updatedAt or ""):sub(1, 16):gsub("T", " "), title)
        end,
      }, function(choice)
        if choice then
          M.load_session(client, choice.sessionId, choice.title)
        end
      end)
    end)
  end)
end

---------------------------------------------------------------------------------------------------------------
-- User commands

local function ask_command(opts)
  local sel = M.selection(opts)
  if sel then
    sel.active = M.active_file() -- the buffer the range is in, before a prompt or the chat takes the focus
  end
  if opts.args ~= "" then
    return M.ask(opts.args, sel)
  end
  vim.ui.input({ prompt = sel and "Ask agentls about the selection: " or "Ask agentls: " }, function(input)
    if input and vim.trim(input) ~= "" then
      M.ask(input, sel)
    end
  end)
end

--- Completion of :AgentAsk's first word: `/name` of the session's (else the workspace's) slash commands.
function M.complete_ask(arglead, cmdline)
  local args = cmdline:gsub("^.-AgentAsk!?%s*", "")
  if arglead:sub(1, 1) ~= "/" or args ~= arglead then
    return {}
  end
  local client = vim.lsp.get_clients({ name = client_mod.name })[1]
  if not client then
    return {}
  end
  local sid = client_mod.session(client)
  local params = sid and { sessionId = sid } or { cwd = client_mod.root(client) }
  local result = client_mod.request_sync(client, "agent/listCommands", params, 5000)
  local out = {}
  for _, c in ipairs(result and result.commands or {}) do
    local name = "/" .. c.name
    if name:sub(1, #arglead) == arglead then
      table.insert(out, name)
    end
  end
  return out
end

M.specs = {
  AgentAsk = { ask_command, { nargs = "*", range = true, complete = function(a, l)
    return M.complete_ask(a, l)
  end, desc = "agentls: ask (with a range: about the selection)" } },
  AgentSteer = {
    function(o)
      M.steer(o.args)
    end,
    { nargs = "+", desc = "agentls: steer the running turn" },
  },
  AgentStop = { M.stop, { nargs = 0, desc = "agentls: interrupt the running turn" } },
  AgentCompact = {
    function(o)
      M.compact(o.args)
    end,
    { nargs = "*", desc = "agentls: compact the context [focus]" },
  },
  AgentUndo = {
    function(o)
      M.undo(o.args ~= "" and o.args or nil)
    end,
    { nargs = "?", desc = "agentls: undo the edits of the last [n] turns" },
  },
  AgentSessions = { M.sessions, { nargs = 0, desc = "agentls: load a stored session" } },
  AgentContext = {
    function(o)
      local c = cfg().context
      if o.args == "on" then
        c.active_file = true
      elseif o.args == "off" then
        c.active_file = false
      elseif o.args == "" then
        c.active_file = not c.active_file
      end
      notify("the active file goes with each prompt: " .. (c.active_file and "on" or "off"))
    end,
    {
      nargs = "?",
      complete = function()
        return { "on", "off" }
      end,
      desc = "agentls: send the active file (path, cursor) with each prompt [on|off]",
    },
  },
  AgentNew = { M.new_session, { nargs = 0, desc = "agentls: start a new session" } },
  AgentChat = {
    function()
      chat.open(true)
    end,
    { nargs = 0, desc = "agentls: open the chat" },
  },
}

function M.create()
  for name, spec in pairs(M.specs) do
    vim.api.nvim_create_user_command(name, spec[1], spec[2])
  end
end

return M
