-- agentls: a coding agent in Neovim, through the `agentls lsp` server.
--
--   require("agentls").setup({ model = "gpt-4.1", approval = "ask" })
--
-- See :help agentls.

local M = {}

M.defaults = {
  -- How to start the server, and extra environment for it.
  cmd = { "agentls", "lsp" },
  cmd_env = nil,
  -- Settings sent as initializationOptions (nil = the server's own config files and env decide).
  model = nil,
  base_url = nil,
  provider = nil, -- "openai" | "anthropic" | "local"
  api_key_env = nil, -- the NAME of the env var holding the key; the key itself is never sent
  approval = nil, -- "ask" | "auto-edit" | "yolo"
  fallback_models = nil,
  max_iterations = nil,
  context_window = nil,
  compression_threshold = nil,
  init_options = {}, -- extra raw initializationOptions, merged last
  -- Which buffers start the server (0.11: vim.lsp.enable; 0.10: an autocmd). nil = every file.
  filetypes = nil,
  root_markers = { ".agentls.toml", "AGENTS.md", ".git" },
  auto_start = true,
  -- What the client offers the server (capabilities.experimental.agent).
  capabilities = { terminal = true, permissions = true, updates = true, diagnostics = true },
  context = {
    -- Send the active file (path, filetype, cursor) with every prompt (:AgentContext toggles it). A range
    -- (:'<,'>AgentAsk) always sends the selection, with its file as the active file.
    active_file = false,
  },
  diagnostics = {
    settle_ms = nil, -- cap on the server's settleMs: how long to wait for linters after an agent edit
  },
  chat = {
    position = "right", -- "right" | "left" | "below" | "above" | "tab" | "current"
    width = 0.4, -- columns, or a fraction of the screen
    height = 0.4, -- lines, or a fraction of the screen (below/above)
    winbar = true,
    thoughts = "dim", -- "dim" | "collapsed" | "hidden"
    tool_output_lines = 3,
  },
  terminal = {
    mirror = false, -- show each agent command's output in a terminal split
    height = 12,
    default_byte_limit = 1024 * 1024,
    kill_grace_ms = 2000,
  },
  edits = {
    attach = true, -- buffers edited by the agent are attached to the client (the agent reads them)
    -- Edits land in buffers, unsaved. "before_command": the buffers the agent edited are written before
    -- it runs a command (so tests see the change); true: written at once; false: never (you save).
    save = "before_command",
  },
  progress = true, -- echo $/progress in the command line
  notify_answer = true, -- vim.notify the final answer (first lines) and errors
}

M.config = nil

local CAMEL = {
  model = "model",
  base_url = "baseUrl",
  provider = "provider",
  api_key_env = "apiKeyEnv",
  approval = "approval",
  fallback_models = "fallbackModels",
  max_iterations = "maxIterations",
  context_window = "contextWindow",
  compression_threshold = "compressionThreshold",
}

--- The initializationOptions for a config: setup's snake_case keys as PROTOCOL's camelCase ones.
function M.init_options(cfg)
  local out = {}
  for key, camel in pairs(CAMEL) do
    if cfg[key] ~= nil then
      out[camel] = cfg[key]
    end
  end
  for k, v in pairs(cfg.init_options or {}) do
    out[k] = v
  end
  if next(out) == nil then
    return vim.empty_dict()
  end
  return out
end

local CHOICES = {
  approval = { "ask", "auto-edit", "yolo" },
  provider = { "openai", "anthropic", "local" },
}

--- nil, or what is wrong with the config in words.
function M.check(cfg)
  if type(cfg.cmd) ~= "table" or type(cfg.cmd[1]) ~= "string" then
    return "cmd must be a list like { 'agentls', 'lsp' }"
  end
  for key, allowed in pairs(CHOICES) do
    if cfg[key] ~= nil and not vim.tbl_contains(allowed, cfg[key]) then
      return ("%s must be one of %s, not %s"):format(key, table.concat(allowed, ", "), vim.inspect(cfg[key]))
    end
  end
  return nil
end

local function validate(cfg)
  local problem = M.check(cfg)
  if problem then
    vim.notify("agentls: bad setup option: " .. problem .. " (using the defaults)", vim.log.levels.ERROR)
    return false
  end
  return true
end

--- Configure the plugin and register the server. Safe to call again (the last call wins).
function M.setup(opts)
  local cfg = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  if opts and opts.cmd then
    cfg.cmd = opts.cmd -- lists replace, they do not merge
  end
  if opts and opts.root_markers then
    cfg.root_markers = opts.root_markers
  end
  if not validate(cfg) then
    cfg = vim.deepcopy(M.defaults)
  end
  M.config = cfg
  require("agentls.chat").configure({
    position = cfg.chat.position,
    width = cfg.chat.width,
    height = cfg.chat.height,
    winbar = cfg.chat.winbar,
    render = {
      thoughts = cfg.chat.thoughts,
      tool_output_lines = cfg.chat.tool_output_lines,
      terminal_output = require("agentls.terminal").peek,
    },
  })
  require("agentls.terminal").configure(cfg.terminal)
  require("agentls.commands").create()
  require("agentls.handlers").setup_autocmds(cfg)
  require("agentls.client").register(cfg)
  return cfg
end

--- The config, set up with the defaults when setup() was never called.
function M.get_config()
  return M.config or M.setup({ auto_start = false })
end

--- For statuslines: "agentls · running… · ctx 12k/128k (9%)".
function M.statusline()
  return require("agentls.chat").statusline()
end

return M
