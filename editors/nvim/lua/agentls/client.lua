-- agentls.client: starting the `agentls lsp` client and talking to it.
--
-- On Neovim 0.11+ the server is registered with `vim.lsp.config` + `vim.lsp.enable` (it starts with the
-- first file buffer); on 0.10 an autocmd on FileType/BufEnter calls `vim.lsp.start`. Commands that need
-- the server when no file is open start it detached from any buffer.

local M = {}

M.name = "agentls"

local has_011 = vim.fn.has("nvim-0.11") == 1

--- Register with vim.lsp.config/vim.lsp.enable (0.11+); false takes the 0.10 path (an autocmd calling
--- vim.lsp.start). Tests flip it to run the 0.10 path on a newer Neovim.
M.use_lsp_enable = has_011

-- client id -> { session = "..." }
local per_client = {}

--- The `vim.lsp` client config for a resolved plugin config (see `agentls.config`).
function M.lsp_config(cfg)
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.experimental = vim.tbl_extend("force", caps.experimental or {}, {
    agent = {
      terminal = cfg.capabilities.terminal ~= false,
      permissions = cfg.capabilities.permissions ~= false,
      updates = cfg.capabilities.updates ~= false,
      diagnostics = cfg.capabilities.diagnostics ~= false,
    },
  })
  caps.window = caps.window or {}
  caps.window.workDoneProgress = true
  return {
    name = M.name,
    cmd = cfg.cmd,
    cmd_env = cfg.cmd_env,
    filetypes = cfg.filetypes,
    root_markers = cfg.root_markers,
    init_options = require("agentls").init_options(cfg),
    capabilities = caps,
    handlers = require("agentls.handlers").handlers(),
    on_exit = function(code, signal, client_id)
      per_client[client_id] = nil
      vim.schedule(function()
        require("agentls.commands").client_exited(client_id, code, signal)
      end)
    end,
  }
end

local function root_for(cfg, bufnr)
  local root
  if cfg.root_markers and #cfg.root_markers > 0 then
    local ok, found = pcall(vim.fs.root, bufnr or 0, cfg.root_markers)
    root = ok and found or nil
  end
  return root or vim.fn.getcwd()
end

local function file_buffer(bufnr)
  return vim.bo[bufnr].buftype == "" and vim.api.nvim_buf_get_name(bufnr) ~= ""
end

--- Register the server so it starts with file buffers.
function M.register(cfg)
  if M.use_lsp_enable and vim.lsp.config and vim.lsp.enable then
    local conf = M.lsp_config(cfg)
    conf.root_dir = function(bufnr, on_dir)
      on_dir(root_for(cfg, bufnr))
    end
    vim.lsp.config(M.name, conf)
    if cfg.auto_start then
      vim.lsp.enable(M.name)
    end
    return
  end
  if not cfg.auto_start then
    return
  end
  local group = vim.api.nvim_create_augroup("agentls.start", { clear = true })
  vim.api.nvim_create_autocmd({ "FileType", "BufEnter" }, {
    group = group,
    callback = function(ev)
      if not file_buffer(ev.buf) then
        return
      end
      if cfg.filetypes and not vim.tbl_contains(cfg.filetypes, vim.bo[ev.buf].filetype) then
        return
      end
      M.start(cfg, ev.buf)
    end,
  })
end

--- Start (or reuse) the client; attached to `bufnr` when it is a file buffer.
function M.start(cfg, bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local conf = M.lsp_config(cfg)
  conf.root_dir = root_for(cfg, bufnr)
  local attach = file_buffer(bufnr)
  if has_011 then
    return vim.lsp.start(conf, { bufnr = bufnr, attach = attach })
  end
  if attach then
    return vim.lsp.start(conf, { bufnr = bufnr })
  end
  for _, c in ipairs(vim.lsp.get_clients({ name = M.name })) do
    if c.config.root_dir == conf.root_dir then
      return c.id
    end
  end
  return vim.lsp.start_client(conf)
end

--- The client for the current buffer: attached to it, else any running agentls client, else a new one.
function M.get(cfg)
  local buf = vim.api.nvim_get_current_buf()
  local attached = vim.lsp.get_clients({ name = M.name, bufnr = buf })
  if attached[1] then
    return attached[1]
  end
  local any = vim.lsp.get_clients({ name = M.name })
  if any[1] then
    return any[1]
  end
  local id = M.start(cfg, buf)
  return id and vim.lsp.get_client_by_id(id) or nil
end

--- Run `fn(client)` once the client has answered `initialize` (at most `timeout_ms`, default 30 s).
function M.when_ready(client, fn, timeout_ms)
  if client.initialized then
    return fn(client)
  end
  local deadline = vim.uv.now() + (timeout_ms or 30000)
  local timer = vim.uv.new_timer()
  timer:start(
    20,
    20,
    vim.schedule_wrap(function()
      if timer:is_closing() then
        return
      end
      local stopped
      if has_011 then
        stopped = client:is_stopped()
      else
        stopped = client.is_stopped()
      end
      if client.initialized or stopped or vim.uv.now() > deadline then
        timer:stop()
        timer:close()
        if client.initialized then
          fn(client)
        else
          vim.notify("agentls: the server did not start (see :LspLog)", vim.log.levels.ERROR)
        end
      end
    end)
  )
end

--- Send a request; `handler(err, result)`. Returns the request id (or nil).
function M.request(client, method, params, handler)
  local cb = function(err, result)
    handler(err, result)
  end
  local ok, id
  if has_011 then
    ok, id = client:request(method, params, cb, 0)
  else
    ok, id = client.request(method, params, cb, 0)
  end
  if not ok then
    handler({ code = -32603, message = "agentls: the server is not running" }, nil)
    return nil
  end
  return id
end

--- A request answered within `timeout_ms` (for completion); the result, or nil on error or timeout.
function M.request_sync(client, method, params, timeout_ms)
  local resp
  if has_011 then
    resp = client:request_sync(method, params, timeout_ms, 0)
  else
    resp = client.request_sync(method, params, timeout_ms, 0)
  end
  return resp and not resp.err and resp.result or nil
end

function M.cancel(client, id)
  if has_011 then
    return client:cancel_request(id)
  end
  return client.cancel_request(id)
end

function M.session(client)
  return per_client[client.id] and per_client[client.id].session or nil
end

function M.set_session(client, session_id)
  per_client[client.id] = per_client[client.id] or {}
  per_client[client.id].session = session_id
end

--- The client's workspace root (where sessions are created).
function M.root(client)
  return client.root_dir or (client.config and client.config.root_dir) or vim.fn.getcwd()
end

--- Run `fn(client, session_id)` with the current session, creating one with agent/newSession if needed.
function M.with_session(cfg, fn)
  local client = M.get(cfg)
  if not client then
    vim.notify("agentls: could not start `" .. table.concat(cfg.cmd, " ") .. "`", vim.log.levels.ERROR)
    return
  end
  M.when_ready(client, function()
    local sid = M.session(client)
    if sid then
      return fn(client, sid)
    end
    M.request(client, "agent/newSession", { cwd = M.root(client) }, function(err, result)
      if err or type(result) ~= "table" or not result.sessionId then
        vim.notify("agentls: agent/newSession failed: " .. (err and err.message or vim.inspect(result)),
          vim.log.levels.ERROR)
        return
      end
      M.set_session(client, result.sessionId)
      fn(client, result.sessionId)
    end)
  end)
end

return M
