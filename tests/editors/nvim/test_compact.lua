-- :AgentCompact after a few turns: the chat shows the compaction, the result has the token counts.
local H = dofile(vim.fn.fnamemodify(arg[0], ":p:h") .. "/helpers.lua")

H.run("compact", function()
  H.start({ setup = { context_window = 4000, compression_threshold = 0.99 } })
  for i = 0, 3 do
    local r = H.turn("AgentAsk Question " .. i)
    H.ok(r.error == nil and r.result.completed, "turn " .. i .. ": " .. vim.inspect(r))
  end
  local C = require("agentls.commands")
  C.last_compact = nil
  vim.cmd("AgentCompact keep the answers")
  H.wait(20000, function()
    return C.last_compact ~= nil
  end, "agent/compress to answer")
  H.log(vim.inspect(C.last_compact))
  H.ok(type(C.last_compact.tokensBefore) == "number" and type(C.last_compact.tokensAfter) == "number",
    "token counts in the result")
  H.ok(C.last_compact.messagesAfter < C.last_compact.messagesBefore, "messages were summarized")
  vim.wait(50)
  H.log(table.concat(H.chat_lines(), "\n"))
  H.chat_has("^⟲ context compacted %(", true)
  local marks = vim.tbl_filter(function(l)
    return l:find("^⟲")
  end, H.chat_lines())
  H.eq(#marks, 1, "one compaction line (automatic checks that changed nothing are not shown)")
  H.finish()
end)
