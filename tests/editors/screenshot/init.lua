-- Neovim config for the screenshot: the plugin against the scripted provider (see make_screenshot.sh).
vim.opt.runtimepath:prepend(os.getenv("AGENTLS_NVIM_PLUGIN"))
vim.o.termguicolors = os.getenv("SHOT_TRUECOLOR") == "1"
vim.o.laststatus = 3
vim.o.showmode = false
vim.o.swapfile = false
vim.o.number = true
vim.o.shortmess = vim.o.shortmess .. "I"
vim.cmd.colorscheme(os.getenv("SHOT_COLORSCHEME") or "habamax")
require("agentls").setup({
  cmd = vim.json.decode(os.getenv("AGENTLS_CMD")),
  model = "scripted",
  base_url = os.getenv("AGENTLS_SCRIPTED_URL"),
  provider = "openai",
  api_key_env = "AGENTLS_TEST_KEY",
  approval = "yolo",
  chat = { width = 0.58 },
  notify_answer = false,
  progress = false,
})
vim.o.statusline = " %f %m%=%{v:lua.require'agentls'.statusline()} "
-- Filetype detection and syntax are switched on after this file runs: open the file on VimEnter.
vim.api.nvim_create_autocmd("VimEnter", {
  nested = true,
  callback = function()
    vim.cmd.edit("greet.py")
    vim.defer_fn(function()
      vim.cmd("AgentAsk Make the greeting in greet.py friendlier, then run the script")
    end, 300)
  end,
})
vim.api.nvim_create_autocmd("User", {
  pattern = "AgentlsTurnDone",
  callback = function()
    vim.defer_fn(function()
      vim.cmd("normal! gg")
      vim.cmd("wincmd l")
      vim.cmd("normal! G")
      vim.cmd("wincmd h")
      local bg = vim.api.nvim_get_hl(0, { name = "Normal" }).bg
      local f = io.open(os.getenv("SHOT_DONE"), "w")
      f:write(bg and ("#%06x"):format(bg) or "#000000")
      f:close()
    end, 200)
  end,
})
