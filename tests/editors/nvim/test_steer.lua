-- :AgentSteer during a turn: agent/steer answers "queued", the chat shows it, and the model's next request
-- carries the guidance (checked from Python).
local H = dofile(vim.fn.fnamemodify(arg[0], ":p:h") .. "/helpers.lua")

H.run("steer", function()
  H.start()
  local C = require("agentls.commands")
  C.last = nil
  vim.cmd("AgentAsk List the files")
  H.wait(15000, function()
    return #H.turn_requests() >= 1
  end, "the first model request")
  vim.cmd("AgentSteer Also mention the README")
  H.wait(10000, function()
    for _, l in ipairs(H.chat_lines()) do
      if l:find("↪ steer", 1, true) then
        return true
      end
    end
  end, "the steer notice in the chat")
  H.chat_has("↪ steer (queued): Also mention the README")
  H.wait(20000, function()
    return C.last ~= nil
  end, "the steered turn to answer")
  H.ok(C.last.error == nil and C.last.result.completed, "turn: " .. vim.inspect(C.last))
  vim.wait(50)
  H.chat_has("Steered answer.")
  H.log(table.concat(H.chat_lines(), "\n"))
  H.finish()
end)
