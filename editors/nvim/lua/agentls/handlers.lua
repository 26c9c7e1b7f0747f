-- agentls.handlers: what the server sends the client.
--
--   agent/update              (notification) an ACP SessionUpdate for the chat buffer
--   agent/requestPermission   vim.ui.select over the options
--   agent/diagnostics         vim.diagnostic.get, once the buffer's linters caught up (agentls.diagnostics)
--   agent/terminal/*          agentls.terminal (vim.system)
--   workspace/applyEdit       Neovim's own handler, then the edited buffers are attached to the client
--   $/progress                Neovim's own handler; an LspProgress autocmd echoes it
--
-- Neovim runs server->client request handlers in a coroutine, so a handler can wait for the user (or a
-- process) with `await` and still answer the request.

local chat = require("agentls.chat")
local terminal = require("agentls.terminal")

local M = {}

--- Suspend the running handler until `start(resolve)` calls `resolve(value)`; returns the value.
--- Outside a coroutine (an old Neovim) it returns nil at once.
function M.await(start)
  local co, main = coroutine.running()
  if not co or main then
    return nil
  end
  local done = false
  start(function(value)
    if done then
      return
    end
    done = true
    -- Scheduled, so a resolve called synchronously happens after the yield below.
    vim.schedule(function()
      coroutine.resume(co, value)
    end)
  end)
  return coroutine.yield()
end

local function config()
  return require("agentls").get_config()
end

local function client_root(ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  return client and require("agentls.client").root(client) or vim.fn.getcwd()
end

local function rpc_error(err)
  return vim.lsp.rpc_response_error(err.code, err.message)
end

--- Wrap `fn(params, ctx) -> result | nil, err` as a request handler.
local function request(fn)
  return function(_, params, ctx)
    local result, err = fn(params or {}, ctx)
    if err then
      return nil, rpc_error(err)
    end
    if result == nil then
      return vim.NIL
    end
    return result
  end
end

function M.on_update(_, params)
  if type(params) ~= "table" or type(params.update) ~= "table" then
    return
  end
  if not chat.shows(params.sessionId) then
    return
  end
  chat.push(params.update)
end

local VERB = { execute = "run", edit = "edit", delete = "delete", read = "read", fetch = "fetch" }

--- The question shown for a permission request.
function M.permission_prompt(params)
  local tc = type(params.toolCall) == "table" and params.toolCall or {}
  local title = tc.title
  if type(title) ~= "string" or title == "" then
    local raw = type(tc.rawInput) == "table" and tc.rawInput or {}
    title = raw.command or raw.path or tc.toolCallId or "a tool"
  end
  local verb = VERB[tc.kind] or tc.kind or "use"
  local detail = ""
  for _, c in ipairs(type(tc.content) == "table" and tc.content or {}) do
    if c.type == "diff" then
      local added, removed = require("agentls.render").diff_stats(c.oldText, c.newText)
      detail = (" (+%d −%d)"):format(added, removed)
    end
  end
  local raw = type(tc.rawInput) == "table" and tc.rawInput or {}
  if type(raw.danger) == "string" then
    detail = detail .. " [" .. raw.danger .. "]"
  end
  return ("agentls asks to %s — %s%s"):format(verb, (tostring(title):gsub("\n", " ")), detail)
end

function M.on_permission(params)
  local options = type(params.options) == "table" and params.options or {}
  local cancelled = { outcome = { outcome = "cancelled" } }
  if #options == 0 then
    return cancelled
  end
  local tc = type(params.toolCall) == "table" and params.toolCall or {}
  if tc.toolCallId then
    chat.apply_state(function(s)
      require("agentls.render").set_awaiting(s, tc.toolCallId, true)
    end)
  end
  local choice = M.await(function(resolve)
    vim.ui.select(options, {
      prompt = M.permission_prompt(params),
      kind = "agentls.permission",
      format_item = function(o)
        return o.name or o.optionId
      end,
    }, function(item)
      resolve(item or false)
    end)
  end)
  if tc.toolCallId then
    chat.apply_state(function(s)
      require("agentls.render").set_awaiting(s, tc.toolCallId, false)
    end)
  end
  if type(choice) == "table" and choice.optionId then
    return { outcome = { outcome = "selected", optionId = choice.optionId } }
  end
  return cancelled
end

-- Buffers the agent edited since its last command (written before the next one with edits.save =
-- "before_command", so the command sees the edits).
M.agent_edited = {}

function M.write_buffer(bufnr)
  if vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].modified and vim.bo[bufnr].buftype == "" then
    vim.api.nvim_buf_call(bufnr, function()
      vim.cmd("silent! write")
    end)
  end
end

function M.save_agent_edits()
  local edited = M.agent_edited
  M.agent_edited = {}
  for bufnr in pairs(edited) do
    M.write_buffer(bufnr)
  end
end

-- Edited buffers are attached so the server reads what the agent wrote (and later the user's changes).
local function edited_uris(edit)
  local uris = {}
  for uri in pairs(type(edit.changes) == "table" and edit.changes or {}) do
    uris[#uris + 1] = uri
  end
  for _, change in ipairs(type(edit.documentChanges) == "table" and edit.documentChanges or {}) do
    if type(change.textDocument) == "table" and change.textDocument.uri then
      uris[#uris + 1] = change.textDocument.uri
    elseif change.kind == "create" and change.uri then
      uris[#uris + 1] = change.uri
    elseif change.kind == "rename" and change.newUri then
      uris[#uris + 1] = change.newUri
    end
  end
  return uris
end

function M.on_apply_edit(err, params, ctx)
  local default = vim.lsp.handlers["workspace/applyEdit"]
  if type(params) == "table" and params.label then
    -- Neovim would echo "Workspace edit <label>" for every edit; the chat shows them already.
    local copy = {}
    for k, v in pairs(params) do
      copy[k] = v
    end
    copy.label = nil
    params = copy
  end
  local result, rerr = default(err, params, ctx)
  local cfg = config()
  if type(result) == "table" and result.applied and type(params) == "table" and type(params.edit) == "table" then
    for _, uri in ipairs(edited_uris(params.edit)) do
      local bufnr = vim.uri_to_bufnr(uri)
      if vim.api.nvim_buf_is_loaded(bufnr) then
        if cfg.edits.attach and not vim.lsp.buf_is_attached(bufnr, ctx.client_id) then
          vim.lsp.buf_attach_client(bufnr, ctx.client_id)
        end
        if cfg.edits.save == true then
          M.write_buffer(bufnr)
        else
          M.agent_edited[bufnr] = true
        end
      end
    end
  end
  return result, rerr
end

--- The handlers table for the client config.
function M.handlers()
  return {
    ["agent/update"] = M.on_update,
    ["agent/requestPermission"] = request(function(params)
      return M.on_permission(params)
    end),
    ["agent/terminal/create"] = request(function(params, ctx)
      if config().edits.save == "before_command" then
        M.save_agent_edits()
      end
      return terminal.create(params, client_root(ctx))
    end),
    ["agent/diagnostics"] = request(function(params)
      return require("agentls.diagnostics").answer(params, M.await, config())
    end),
    ["agent/terminal/output"] = request(terminal.output),
    ["agent/terminal/waitForExit"] = request(function(params)
      return terminal.wait_for_exit(params, M.await)
    end),
    ["agent/terminal/kill"] = request(terminal.kill),
    ["agent/terminal/release"] = request(terminal.release),
    ["workspace/applyEdit"] = M.on_apply_edit,
  }
end

local function progress_text(value)
  local parts = {}
  if value.title and value.title ~= "" then
    parts[#parts + 1] = value.title
  end
  if value.message and value.message ~= "" then
    parts[#parts + 1] = value.message
  end
  local text = table.concat(parts, ": ")
  if value.percentage then
    text = ("%s (%d%%)"):format(text, value.percentage)
  end
  return text
end

function M.on_progress(ev)
  local data = ev.data or {}
  local client = data.client_id and vim.lsp.get_client_by_id(data.client_id)
  if not client or client.name ~= "agentls" then
    return
  end
  local value = type(data.params) == "table" and data.params.value or nil
  if type(value) ~= "table" then
    return
  end
  if value.kind == "end" then
    chat.set_progress(nil)
    if config().progress then
      vim.api.nvim_echo({ { "" } }, false, {})
    end
    return
  end
  local text = progress_text(value)
  chat.set_progress(text)
  if config().progress and text ~= "" then
    local shown = text:find("^agentls") and text or ("agentls: " .. text)
    vim.api.nvim_echo({ { shown, "ModeMsg" } }, false, {})
  end
end

function M.setup_autocmds(_)
  local group = vim.api.nvim_create_augroup("agentls", { clear = true })
  vim.api.nvim_create_autocmd("LspProgress", { group = group, callback = M.on_progress })
  vim.api.nvim_create_autocmd("DiagnosticChanged", { group = group, callback = require("agentls.diagnostics").on_changed })
  vim.api.nvim_create_autocmd("VimLeavePre", { group = group, callback = terminal.kill_all })
end

return M
