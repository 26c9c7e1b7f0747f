-- The plugin without a server: commands from plugin/agentls.lua, setup() registering the LSP config,
-- and the chat view writing updates into the buffer in place.
local H = dofile(vim.fn.fnamemodify(arg[0], ":p:h") .. "/helpers.lua")

H.run("load", function()
  H.capture_notify()
  vim.cmd.runtime("plugin/agentls.lua")
  for _, name in ipairs({ "AgentAsk", "AgentSteer", "AgentStop", "AgentCompact", "AgentUndo", "AgentSessions",
    "AgentNew", "AgentChat" }) do
    H.eq(vim.fn.exists(":" .. name), 2, ":" .. name .. " exists before setup()")
  end

  local A = require("agentls")
  A.setup({ cmd = { "agentls-test", "lsp" }, model = "m1", approval = "yolo", auto_start = false })
  if vim.fn.has("nvim-0.11") == 1 then
    local conf = vim.lsp.config.agentls
    H.ok(conf ~= nil, "vim.lsp.config has agentls")
    H.eq(conf.cmd, { "agentls-test", "lsp" }, "cmd")
    H.eq(conf.init_options, { model = "m1", approval = "yolo" }, "init options")
    H.eq(conf.capabilities.experimental.agent, { terminal = true, permissions = true, updates = true,
      diagnostics = true },
      "experimental.agent capabilities")
    H.eq(conf.capabilities.window.workDoneProgress, true, "work done progress")
    H.ok(conf.handlers["agent/update"] and conf.handlers["agent/requestPermission"]
      and conf.handlers["agent/terminal/create"], "handlers for the agent methods")
  end

  -- A bad option is reported and the defaults are used.
  A.setup({ approval = "sometimes", auto_start = false })
  H.ok(H.notes[#H.notes] and H.notes[#H.notes].msg:find("approval must be one of"), "bad option reported")
  H.eq(A.config.approval, nil, "defaults after a bad option")

  -- The chat view: blocks written in place, following the end, winbar with usage.
  A.setup({ auto_start = false })
  local chat = require("agentls.chat")
  local win = chat.open()
  local buf = vim.api.nvim_win_get_buf(win)
  H.eq(vim.api.nvim_buf_get_name(buf), "agentls://chat", "chat buffer name")
  H.eq(vim.bo[buf].filetype, "markdown", "markdown filetype")
  H.eq(vim.bo[buf].buftype, "nofile", "scratch buffer")
  H.ok(vim.api.nvim_get_current_win() ~= win, "the chat opens without taking the cursor")
  local R = require("agentls.render")
  chat.apply_state(function(st)
    R.begin_turn(st, "hi")
  end)
  chat.push({ sessionUpdate = "tool_call", toolCallId = "a", title = "List .", status = "pending" })
  chat.push({ sessionUpdate = "agent_message_chunk", content = { type = "text", text = "Hel" } })
  chat.flush()
  chat.push({ sessionUpdate = "agent_message_chunk", content = { type = "text", text = "lo" } })
  chat.push({ sessionUpdate = "tool_call_update", toolCallId = "a", status = "completed" })
  chat.push({ sessionUpdate = "usage_update", used = 5000, size = 100000 })
  vim.wait(100)
  H.eq(H.text(buf), "## You\nhi\n\n## agentls\n▸ List . ✓\n\nHello", "chat lines after in-place updates")
  H.eq(vim.api.nvim_win_get_cursor(win)[1], vim.api.nvim_buf_line_count(buf), "the window follows the end")
  H.ok(chat.winbar():find("ctx 5k/100k %(5%%%%%)"), "winbar shows usage (escaped): " .. chat.winbar())
  local marks = vim.api.nvim_buf_get_extmarks(buf, chat.ns, 0, -1, { details = true })
  H.ok(#marks >= 3, "highlights are set: " .. #marks)
  chat.reset()
  H.eq(H.text(buf), "", "reset empties the buffer")

  -- A charwise visual selection sends exactly the selected characters; a typed range whole lines.
  vim.cmd("enew")
  vim.api.nvim_buf_set_name(0, vim.fn.getcwd() .. "/sel.py")
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "alpha beta", "gamma delta", "last" })
  vim.cmd("normal! 1G06lvj04l\27")
  local C = require("agentls.commands")
  local sel = C.selection({ range = 2, line1 = 1, line2 = 2 })
  H.eq(sel.text, "beta\ngamma", "charwise selection")
  H.eq({ sel.path, sel.line1, sel.line2 }, { "sel.py", 1, 2 }, "selection place")
  H.eq(sel.range, { start = { line = 0, character = 6 }, ["end"] = { line = 1, character = 5 } }, "charwise range")
  H.ok(sel.uri:find("^file://.*/sel%.py$"), "file uri: " .. sel.uri)
  sel = C.selection({ range = 2, line1 = 2, line2 = 3 })
  H.eq(sel.text, "gamma delta\nlast", "a typed range takes whole lines")
  H.eq(sel.range, { start = { line = 1, character = 0 }, ["end"] = { line = 3, character = 0 } }, "line range")
  H.eq(C.selection({ range = 0, line1 = 1, line2 = 1 }), nil, "no range, no selection")

  -- The help file has valid tags (helptags on a copy, so the plugin directory stays clean).
  local tmp = vim.fn.tempname()
  vim.fn.mkdir(tmp .. "/doc", "p")
  local src = vim.api.nvim_get_runtime_file("doc/agentls.txt", false)[1]
  H.ok(src, "doc/agentls.txt is on the runtimepath")
  vim.fn.writefile(vim.fn.readfile(src), tmp .. "/doc/agentls.txt")
  vim.cmd("helptags " .. tmp .. "/doc")
  vim.opt.runtimepath:prepend(tmp)
  vim.cmd("help :AgentSteer")
  H.ok(vim.api.nvim_get_current_line():find("AgentSteer"), "help finds :AgentSteer")
end)
