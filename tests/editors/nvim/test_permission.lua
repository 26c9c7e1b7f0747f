-- approval = "ask": agent/requestPermission goes through vim.ui.select (stubbed): allow once, reject, cancel.
local H = dofile(vim.fn.fnamemodify(arg[0], ":p:h") .. "/helpers.lua")

H.run("permission", function()
  local answer = "allow_once"
  local seen_awaiting = false
  H.stub_select(function(items, opts)
    -- While the question is open, the chat shows the tool call waiting.
    require("agentls.chat").flush()
    for _, l in ipairs(H.chat_lines()) do
      if l:find("⏸ awaiting approval", 1, true) then
        seen_awaiting = true
      end
    end
    if answer == nil then
      return nil
    end
    for _, o in ipairs(items) do
      if o.optionId == answer then
        return o
      end
    end
    H.fail("no option " .. answer .. " in " .. vim.inspect(items))
  end)
  H.start({ setup = { approval = "ask" } })

  local r = H.turn("AgentAsk Write allowed.txt")
  H.ok(r.error == nil and r.result.completed, "allowed turn: " .. vim.inspect(r))
  H.eq(#H.selects, 1, "asked once")
  H.ok(H.selects[1].prompt:find("edit", 1, true) and H.selects[1].prompt:find("allowed.txt", 1, true),
    "the question names the edit: " .. H.selects[1].prompt)
  local ids = vim.tbl_map(function(o)
    return o.optionId
  end, H.selects[1].items)
  H.ok(vim.tbl_contains(ids, "allow_once") and vim.tbl_contains(ids, "reject_once"), "options: " .. vim.inspect(ids))
  H.ok(seen_awaiting, "the chat showed the tool call awaiting approval")
  local b = vim.fn.bufnr(vim.fn.getcwd() .. "/allowed.txt")
  H.ok(b > 0 and vim.api.nvim_buf_get_lines(b, 0, -1, false)[1] == "yes", "allowed.txt was written")

  answer = "reject_once"
  r = H.turn("AgentAsk Write rejected.txt")
  H.ok(r.error == nil, "rejected turn answered: " .. vim.inspect(r))
  H.eq(#H.selects, 2, "asked again")
  H.eq(vim.fn.bufnr(vim.fn.getcwd() .. "/rejected.txt"), -1, "rejected.txt was not written")
  H.eq(vim.fn.filereadable("rejected.txt"), 0, "not on disk either")
  H.chat_has("▸ Write rejected.txt ✗")

  answer = nil -- the user dismisses the question
  r = H.turn("AgentAsk Write cancelled.txt")
  H.ok(r.error == nil, "cancelled turn answered: " .. vim.inspect(r))
  H.eq(vim.fn.filereadable("cancelled.txt"), 0, "cancelled.txt was not written")
  H.log(table.concat(H.chat_lines(), "\n"))
  H.finish()
end)
