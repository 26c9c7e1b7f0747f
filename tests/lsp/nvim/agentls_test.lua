-- Run by tests/lsp/test_neovim.py: headless Neovim with the documented configuration
-- (docs/editors/neovim-lsp.md), driving `agentls lsp` against the scripted model.
-- Writes what it saw as JSON to $AGENTLS_TEST_RESULT and exits non-zero on failure.
local out = { notes = {}, progress = {}, steps = {} }

local function save()
  local f = assert(io.open(vim.env.AGENTLS_TEST_RESULT, "w"))
  f:write(vim.json.encode(out))
  f:close()
end

local function fail(what)
  error("timed out waiting for " .. what, 2)
end

local function wait(what, cond, ms)
  if not vim.wait(ms or 20000, cond, 20) then
    fail(what)
  end
end

local function noted(text)
  for _, note in ipairs(out.notes) do
    if note == text then
      return true
    end
  end
  return false
end

local function count(text)
  local n = 0
  for _, note in ipairs(out.notes) do
    if note == text then
      n = n + 1
    end
  end
  return n
end

local function progress_count(kind)
  local n = 0
  for _, value in ipairs(out.progress) do
    if value.kind == kind then
      n = n + 1
    end
  end
  return n
end

local function run()
  vim.cmd("filetype on")
  vim.notify = function(msg)
    table.insert(out.notes, msg)
  end
  dofile(vim.env.AGENTLS_NVIM_CONFIG) -- the documented block, as written
  vim.api.nvim_create_autocmd("LspProgress", {
    callback = function(ev)
      table.insert(out.progress, ev.data.params.value)
    end,
  })

  vim.cmd.edit(vim.env.AGENTLS_WORKSPACE .. "/app.py")
  wait("the server to start", function()
    local client = vim.lsp.get_clients({ name = "agentls" })[1]
    return client ~= nil and client.initialized
  end)
  table.insert(out.steps, "started")

  -- 1. A turn whose edit lands in the buffer.
  vim.cmd("AgentTurn say hi instead of hello")
  wait("the first answer", function() return noted("agentls: Changed the greeting.") end)
  out.buffer = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  out.modified = vim.bo.modified
  table.insert(out.steps, "edited")

  -- 2. A steer while the model is working.
  vim.cmd("AgentTurn now add a docstring")
  wait("the second turn to start", function() return progress_count("begin") >= 2 end)
  vim.cmd("AgentSteer and keep it short")
  wait("the steer answer", function() return noted("agentls: steer queued") end)
  wait("the second answer", function() return noted("agentls: Added a short docstring.") end)
  table.insert(out.steps, "steered")

  -- 3. Cancel a turn.
  vim.cmd("AgentTurn think forever")
  wait("the third turn's tool call", function() return count("agentls: Read app.py") >= 3 end)
  vim.cmd("AgentCancel")
  wait("the cancelled progress to end", function()
    for _, value in ipairs(out.progress) do
      if value.kind == "end" and value.message == "cancelled" then
        return true
      end
    end
    return false
  end)
  table.insert(out.steps, "cancelled")
end

local ok, err = xpcall(run, debug.traceback)
if not ok then
  out.error = err
end
save()
vim.cmd(ok and "qall!" or "cquit 1")
