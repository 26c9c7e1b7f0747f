-- :AgentStop interrupts a turn whose model call stalls for a minute; the turn answers interrupted at once.
local H = dofile(vim.fn.fnamemodify(arg[0], ":p:h") .. "/helpers.lua")

H.run("stop", function()
  H.start()
  local C = require("agentls.commands")
  C.last = nil
  vim.cmd("AgentAsk Take your time")
  H.wait(15000, function()
    return #H.turn_requests() >= 1
  end, "the model request to arrive at the scripted provider")
  H.ok(C.is_running(), "the turn is running")
  H.ok(require("agentls.chat").statusline():find("agentls ·"), "statusline while running: "
    .. require("agentls.chat").statusline())
  local t0 = vim.uv.hrtime()
  vim.cmd("AgentStop")
  H.wait(10000, function()
    return C.last ~= nil
  end, "the interrupted turn to answer")
  local ms = (vim.uv.hrtime() - t0) / 1e6
  H.log(("interrupted in %.0f ms"):format(ms))
  H.ok(ms < 5000, "the interrupt took " .. ms .. " ms")
  H.ok(C.last.error == nil, "an interrupt is an answer, not an error: " .. vim.inspect(C.last.error))
  H.eq(C.last.result.interrupted, true, "interrupted")
  vim.wait(50)
  H.chat_has("⏹ interrupted")
  H.ok(not C.is_running(), "nothing runs any more")

  -- The server dies during a turn: the turn is forgotten and the chat says so.
  C.last = nil
  vim.cmd("AgentAsk And again")
  H.wait(15000, function()
    return C.is_running()
  end, "the second turn to start")
  local killed = 0
  for _, pid in ipairs(vim.api.nvim_get_proc_children(vim.fn.getpid())) do
    local cmdline = table.concat(vim.fn.readfile("/proc/" .. pid .. "/cmdline", "b"), " ")
    if cmdline:find("agentls", 1, true) then
      vim.uv.kill(pid, "sigkill")
      killed = killed + 1
    end
  end
  H.eq(killed, 1, "killed the server process")
  H.wait(10000, function()
    return not C.is_running()
  end, "the lost turn to be forgotten")
  vim.wait(100)
  H.chat_has("^✗ the agentls server stopped", true)
  H.log(table.concat(H.chat_lines(), "\n"))
end)
