-- agent/terminal/* through vim.system: the agent's command runs in Neovim, its output and exit code go
-- back; a command past its timeout is killed through agent/terminal/kill. Mirrored into a terminal split.
local H = dofile(vim.fn.fnamemodify(arg[0], ":p:h") .. "/helpers.lua")

H.run("terminal", function()
  local T = require("agentls.terminal")
  local calls = {}
  for _, name in ipairs({ "create", "output", "wait_for_exit", "kill", "release" }) do
    local orig = T[name]
    T[name] = function(...)
      table.insert(calls, name)
      return orig(...)
    end
  end
  H.start({ setup = { approval = "yolo", terminal = { mirror = true } } })

  local r = H.turn("AgentAsk Run the script")
  H.ok(r.error == nil and r.result.completed, "turn: " .. vim.inspect(r))
  H.log("calls: " .. table.concat(calls, " "))
  H.ok(vim.tbl_contains(calls, "create"), "agent/terminal/create reached the plugin")
  H.ok(vim.tbl_contains(calls, "wait_for_exit") or vim.tbl_contains(calls, "output"), "output was read")
  H.chat_has("▸ echo hello-from-nvim; echo to-stderr >&2; exit 3 ✗")
  H.chat_has("    │ hello-from-nvim")
  local mirror = T.mirror_win and vim.api.nvim_win_is_valid(T.mirror_win) and vim.api.nvim_win_get_buf(T.mirror_win)
  H.ok(mirror and vim.bo[mirror].buftype == "terminal", "a terminal split mirrors the command")

  calls = {}
  local t0 = vim.uv.hrtime()
  r = H.turn("AgentAsk Run something slow", 30000)
  local ms = (vim.uv.hrtime() - t0) / 1e6
  H.log(("slow turn took %.0f ms; calls: %s"):format(ms, table.concat(calls, " ")))
  H.ok(r.error == nil and r.result.completed, "slow turn: " .. vim.inspect(r))
  H.ok(vim.tbl_contains(calls, "kill") or vim.tbl_contains(calls, "release"), "the command was killed")
  H.ok(ms < 15000, "the timeout killed `sleep 30` quickly")
  H.eq(#T.list(), 0, "every terminal was released")
  H.log(table.concat(H.chat_lines(), "\n"))
  H.finish()
end)
