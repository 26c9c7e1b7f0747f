-- agentls: commands exist from startup; the first one used sets the plugin up with the defaults when
-- require("agentls").setup() was not called (that also registers the server to start with file buffers).
if vim.g.loaded_agentls then
  return
end
vim.g.loaded_agentls = true

if vim.fn.has("nvim-0.10") == 0 then
  vim.notify("agentls needs Neovim 0.10 or newer", vim.log.levels.WARN)
  return
end

require("agentls.commands").create()
