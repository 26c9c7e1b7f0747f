-- The Neovim 0.10 path (no vim.lsp.enable): an autocmd on FileType/BufEnter starts the client with
-- vim.lsp.start when a file is opened; a turn then works as usual.
local H = dofile(vim.fn.fnamemodify(arg[0], ":p:h") .. "/helpers.lua")

H.run("legacy", function()
  require("agentls.client").use_lsp_enable = false
  local c = H.start({ file = "README.md" })
  H.ok(vim.lsp.buf_is_attached(0, c.id), "the client is attached to the opened file")
  H.eq(#vim.api.nvim_get_autocmds({ group = "agentls.start" }), 2, "FileType and BufEnter autocmds")
  local r = H.turn("AgentAsk hello")
  H.ok(r.error == nil and r.result.completed, "turn: " .. vim.inspect(r))
  H.chat_has("Hi from the legacy path.")
  H.finish()
end)
