-- Shared helpers for the headless Neovim tests: `nvim --headless -u NONE -l <script>.lua`.
-- AGENTLS_NVIM_PLUGIN points at editors/nvim; scripts fail with a message and exit code 1.
local H = {}

local plugin = os.getenv("AGENTLS_NVIM_PLUGIN")
if plugin and plugin ~= "" then
  vim.opt.runtimepath:prepend(plugin)
end
vim.o.swapfile = false
vim.o.shadafile = "NONE"

function H.fail(msg)
  io.stderr:write("FAIL: " .. msg .. "\n")
  io.stderr:flush()
  os.exit(1)
end

function H.ok(cond, msg)
  if not cond then
    H.fail(msg)
  end
end

function H.eq(actual, expected, msg)
  if not vim.deep_equal(actual, expected) then
    H.fail(("%s\n  expected: %s\n  actual:   %s"):format(msg or "values differ", vim.inspect(expected),
      vim.inspect(actual)))
  end
end

function H.log(msg)
  io.stdout:write(msg .. "\n")
  io.stdout:flush()
end

--- Wait until `cond()` is truthy, processing events; fail with `what` after `timeout_ms`.
function H.wait(timeout_ms, cond, what)
  local ok = vim.wait(timeout_ms, cond, 20)
  if not ok then
    H.fail("timed out after " .. timeout_ms .. " ms waiting for " .. what)
  end
end

--- Run `fn` and exit 0, or report the error and exit 1.
function H.run(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if not ok then
    H.fail(name .. ": " .. tostring(err))
  end
  H.log("PASS " .. name)
  os.exit(0)
end

--- Every line of a buffer joined with "\n".
function H.text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
end

--- POST a JSON body to the scripted provider's control endpoint (curl, synchronous).
function H.post(url, body)
  local out = vim.system({ "curl", "-sS", "-X", "POST", "-H", "content-type: application/json",
    "--data-binary", vim.json.encode(body), url }, { text = true }):wait()
  if out.code ~= 0 then
    H.fail("POST " .. url .. " failed: " .. (out.stderr or ""))
  end
  return vim.json.decode(out.stdout)
end

function H.get(url)
  local out = vim.system({ "curl", "-sS", url }, { text = true }):wait()
  if out.code ~= 0 then
    H.fail("GET " .. url .. " failed: " .. (out.stderr or ""))
  end
  return vim.json.decode(out.stdout)
end

---------------------------------------------------------------------------------------------------------------
-- End-to-end: the real `agentls lsp` against the scripted provider (env set by test_nvim_plugin.py).

H.notes = {}

--- Record vim.notify messages (and print them) instead of showing them.
function H.capture_notify()
  vim.notify = function(msg, level)
    table.insert(H.notes, { msg = tostring(msg), level = level })
    H.log(("notify[%s]: %s"):format(tostring(level), tostring(msg)))
  end
end

H.selects = {}

--- Replace vim.ui.select: `choose(items, opts)` returns the item to pick (nil cancels). Calls are recorded.
function H.stub_select(choose)
  vim.ui.select = function(items, opts, on_choice)
    table.insert(H.selects, { items = items, prompt = opts.prompt })
    H.log("select: " .. tostring(opts.prompt))
    on_choice(choose(items, opts))
  end
end

--- Set the plugin up against the scripted provider and open `file`; returns the started client.
function H.start(opts)
  opts = opts or {}
  H.capture_notify()
  local setup = vim.tbl_deep_extend("force", {
    cmd = vim.json.decode((assert(os.getenv("AGENTLS_CMD"), "AGENTLS_CMD is not set"))),
    model = "scripted",
    base_url = (assert(os.getenv("AGENTLS_SCRIPTED_URL"), "AGENTLS_SCRIPTED_URL is not set")),
    provider = "openai",
    api_key_env = "AGENTLS_TEST_KEY",
    approval = "auto-edit",
  }, opts.setup or {})
  require("agentls").setup(setup)
  vim.cmd.edit(opts.file or "README.md")
  H.wait(30000, function()
    local c = vim.lsp.get_clients({ name = "agentls" })[1]
    return c and c.initialized
  end, "the agentls client to start and initialize")
  return vim.lsp.get_clients({ name = "agentls" })[1]
end

--- Run an Ex command that starts a turn and wait for the turn's answer; returns commands.last.
function H.turn(excmd, timeout_ms)
  local C = require("agentls.commands")
  C.last = nil
  vim.cmd(excmd)
  H.wait(timeout_ms or 30000, function()
    return C.last ~= nil
  end, "the turn started by :" .. excmd .. " to answer")
  vim.wait(50) -- let scheduled redraws run
  return C.last
end

function H.chat_lines()
  return require("agentls.chat").lines()
end

--- Fail unless the chat buffer has a line equal to `line` (or matching it, with plain=false).
function H.chat_has(line, pattern)
  for _, l in ipairs(H.chat_lines()) do
    if (pattern and l:find(line)) or l == line then
      return true
    end
  end
  H.fail(("the chat has no line %s %q; it shows:\n%s"):format(pattern and "matching" or "equal to", line,
    table.concat(H.chat_lines(), "\n")))
end

--- The scripted provider's recorded requests.
function H.requests()
  return H.get(os.getenv("AGENTLS_SCRIPTED_BASE") .. "/_scripted/requests").requests
end

--- Requests of the turn purpose (titles and summaries left out).
function H.turn_requests()
  return vim.tbl_filter(function(r)
    local h = r.headers or {}
    return (h["x-agentls-purpose"] or "turn") == "turn"
  end, H.requests())
end

function H.finish()
  for _, c in ipairs(vim.lsp.get_clients({ name = "agentls" })) do
    c:stop(true)
  end
end

return H
