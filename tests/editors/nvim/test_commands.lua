-- :AgentAsk /<Tab> completes the workspace's slash commands (agent/listCommands, before and after the first
-- session), and :AgentAsk /review app.py sends the expanded command file to the model.
local H = dofile(vim.fn.fnamemodify(arg[0], ":p:h") .. "/helpers.lua")

H.run("commands", function()
  H.start()
  local cmds = require("agentls.commands")
  local before = cmds.complete_ask("/re", "AgentAsk /re")
  H.ok(vim.tbl_contains(before, "/review") and vim.tbl_contains(before, "/release-notes"),
    "completion before any session: " .. vim.inspect(before))
  H.eq(cmds.complete_ask("/", "AgentAsk /review /"), {}, "only the first word is a command")
  H.eq(cmds.complete_ask("word", "AgentAsk word"), {}, "not a slash: no completion")
  H.ok(vim.tbl_contains(vim.fn.getcompletion("AgentAsk /mem", "cmdline"), "/memory"), "through the cmdline")
  local r = H.turn("AgentAsk /review greet.py")
  H.ok(r.error == nil and r.result.completed, "the command's turn: " .. vim.inspect(r))
  local after = cmds.complete_ask("/rev", "AgentAsk /rev")
  H.eq(after, { "/review" }, "completion in the session")
end)
