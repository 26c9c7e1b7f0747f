-- The editor sees, the agent sees: a small linter (Python's own parser, run with vim.system on each
-- change of a python buffer, reporting through vim.diagnostic.set a little later, like a language
-- server) flags the agent's edit, and the plugin answers agent/diagnostics so the model reads the
-- error in the same round. Then :'<,'>AgentAsk sends the selection as the turn's context.
local H = dofile(vim.fn.fnamemodify(arg[0], ":p:h") .. "/helpers.lua")

local python = assert(os.getenv("AGENTLS_TEST_PYTHON"), "AGENTLS_TEST_PYTHON is not set")
local ns = vim.api.nvim_create_namespace("small-linter")
local CHECK = [[
import ast, sys
try:
    ast.parse(sys.stdin.read())
except SyntaxError as e:
    print(f"{e.lineno}:{e.offset}:{e.msg}")
]]
local lint_runs = 0

local function lint(buf)
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
  vim.system({ python, "-c", CHECK }, { stdin = text, text = true }, function(out)
    vim.schedule(function()
      lint_runs = lint_runs + 1
      local found = {}
      local l, c, msg = (out.stdout or ""):match("^(%d+):(%d+):([^\n]*)")
      if l then
        found[1] = { lnum = tonumber(l) - 1, col = tonumber(c) - 1, message = msg, source = "small-linter",
          severity = vim.diagnostic.severity.ERROR }
      end
      if vim.api.nvim_buf_is_valid(buf) then
        vim.diagnostic.set(ns, buf, found)
      end
    end)
  end)
end

H.run("diagnostics", function()
  H.start({ file = "greet.py", setup = { approval = "yolo" } })
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].filetype = "python"
  vim.api.nvim_buf_attach(buf, false, {
    on_lines = function()
      vim.defer_fn(function()
        lint(buf)
      end, 100) -- a linter takes its time
    end,
  })
  lint(buf)
  H.wait(5000, function()
    return lint_runs > 0
  end, "the first lint")

  local r = H.turn("AgentAsk Make greet take a title")
  H.ok(r.error == nil and r.result.completed, "the turn completed: " .. vim.inspect(r))
  H.log(table.concat(H.chat_lines(), "\n"))
  H.ok(#vim.diagnostic.get(buf, { namespace = ns }) == 1, "the linter flagged the buffer")

  -- :'<,'>AgentAsk: lines 1-2 as the selection.
  vim.api.nvim_set_current_buf(buf)
  vim.cmd("normal! 1GVj\27")
  r = H.turn("'<,'>AgentAsk What does this do?")
  H.ok(r.error == nil and r.result.completed, "the selection turn completed: " .. vim.inspect(r))
  H.chat_has("[selection: greet.py:1-2]")
  H.finish()
end)
