-- Edits arrive as workspace/applyEdit and change the open buffer (the disk keeps the old text until the
-- user saves); a new file gets a buffer; :AgentUndo reverts through applyEdit too.
local H = dofile(vim.fn.fnamemodify(arg[0], ":p:h") .. "/helpers.lua")

H.run("edit", function()
  H.start({ file = "greet.py", setup = { approval = "yolo" } })
  local buf = vim.api.nvim_get_current_buf()
  local before = H.text(buf)

  local r = H.turn("AgentAsk Say Howdy instead of Hello, and write a note")
  H.ok(r.error == nil and r.result.completed, "the turn completed: " .. vim.inspect(r))
  H.log(table.concat(H.chat_lines(), "\n"))
  local after = H.text(buf)
  H.ok(after:find('return "Howdy, " + name', 1, true), "greet.py buffer was edited:\n" .. after)
  H.ok(not after:find("Hello", 1, true), "no Hello left in the buffer")
  H.ok(vim.bo[buf].modified, "the edit is unsaved in the buffer")
  H.ok(vim.fn.readfile("greet.py")[2]:find("Hello", 1, true), "the disk still has the old text")
  H.chat_has("▸ Edit greet.py ✓")
  H.chat_has("    ✎ greet.py +1 −1")
  H.chat_has("    ✎ notes.txt (new) +1 −0")

  local note = vim.fn.bufnr(vim.fn.getcwd() .. "/notes.txt")
  H.ok(note > 0, "notes.txt has a buffer")
  H.eq(vim.api.nvim_buf_get_lines(note, 0, -1, false)[1], "first note", "notes.txt text")
  local client = vim.lsp.get_clients({ name = "agentls" })[1]
  H.ok(vim.lsp.buf_is_attached(note, client.id), "the new file's buffer is attached to the client")

  -- The agent runs a command: its edited buffers are written first, so the command sees the change.
  r = H.turn("AgentAsk Show the files")
  H.ok(r.error == nil and r.result.completed, "the command turn completed: " .. vim.inspect(r))
  H.ok(not vim.bo[buf].modified, "greet.py was written before the command")
  H.ok(vim.fn.readfile("greet.py")[2]:find("Howdy", 1, true), "the disk has the edit")

  -- Undo both turns: greet.py goes back to its text.
  vim.cmd("AgentUndo 2")
  H.wait(10000, function()
    return H.text(buf) == before
  end, "greet.py to be restored by :AgentUndo (now:\n" .. H.text(buf) .. ")")
  H.wait(5000, function()
    for _, l in ipairs(H.chat_lines()) do
      if l:find("^↶ undid 2 turn") then
        return true
      end
    end
  end, "the undo notice in the chat")
  H.log(table.concat(H.chat_lines(), "\n"))
  H.finish()
end)
