-- :AgentAsk against the real server: the streamed turn lands in the chat buffer; progress is reported;
-- a visual selection is sent as a resource; :AgentNew and :AgentSessions reload the first session.
local H = dofile(vim.fn.fnamemodify(arg[0], ":p:h") .. "/helpers.lua")

H.run("ask", function()
  local progress = {}
  vim.api.nvim_create_autocmd("LspProgress", {
    callback = function(ev)
      local v = ev.data and ev.data.params and ev.data.params.value
      if type(v) == "table" then
        table.insert(progress, v.kind)
      end
    end,
  })
  H.start()

  local r = H.turn("AgentAsk What does the README say?")
  H.ok(r.error == nil, "the turn answered: " .. vim.inspect(r.error))
  H.eq(r.result.completed, true, "completed")
  H.eq(r.result.finalResponse, "The README says: this project greets people.", "final response")
  H.log(table.concat(H.chat_lines(), "\n"))
  H.chat_has("## You")
  H.chat_has("What does the README say?")
  H.chat_has("## agentls")
  H.chat_has("┊ I should read the README.")
  H.chat_has("▸ Read README.md ✓")
  H.chat_has("The README says: this project greets people.")
  local chat = require("agentls.chat")
  H.ok(chat.window() ~= nil, "the chat window is open")
  H.ok(vim.tbl_contains(progress, "begin") and vim.tbl_contains(progress, "end"),
    "$/progress begin and end seen: " .. vim.inspect(progress))
  H.ok(chat.statusline():find("agentls"), "statusline")
  local answered = vim.tbl_filter(function(n)
    return n.msg:find("this project greets people", 1, true)
  end, H.notes)
  H.ok(#answered > 0, "the final answer was notified")
  local first_session = require("agentls.client").session(vim.lsp.get_clients({ name = "agentls" })[1])

  -- A selection (lines 1-2 of greet.py) goes along as a resource block.
  vim.cmd.edit("greet.py")
  local r2 = H.turn("1,2AgentAsk Explain this")
  H.ok(r2.error == nil and r2.result.completed, "selection turn: " .. vim.inspect(r2))
  H.chat_has("[selection: greet.py:1-2]")
  H.chat_has("It returns a greeting.")

  -- A new session empties the chat; the sessions picker loads the first one back (replayed).
  vim.cmd("AgentNew")
  H.wait(10000, function()
    return require("agentls.chat").shown_session() ~= first_session
  end, "a new session")
  H.eq(table.concat(H.chat_lines(), ""), "", "the chat is empty after :AgentNew")
  H.stub_select(function(items)
    for _, s in ipairs(items) do
      if s.sessionId == first_session then
        return s
      end
    end
  end)
  vim.cmd("AgentSessions")
  H.wait(10000, function()
    for _, l in ipairs(H.chat_lines()) do
      if l:find("this project greets people", 1, true) then
        return true
      end
    end
  end, "the replayed session in the chat")
  H.log("--- after loadSession\n" .. table.concat(H.chat_lines(), "\n"))
  H.chat_has("What does the README say?")
  H.ok(#H.selects == 1 and #H.selects[1].items >= 1, "the picker listed the session: " .. vim.inspect(H.selects))
  H.finish()
end)
