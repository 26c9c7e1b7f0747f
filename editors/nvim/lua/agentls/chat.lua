-- agentls.chat: the `agentls://chat` buffer.
--
-- It holds one chat state (see `agentls.render`) and writes each changed block into the buffer,
-- replacing only that block's own lines, so a streamed message or a `tool_call_update` is updated in place.

local R = require("agentls.render")

local M = {}

local ns = vim.api.nvim_create_namespace("agentls.chat")
M.ns = ns

local view = {
  buf = nil,
  state = nil,
  counts = {}, -- block index -> number of lines in the buffer
  scheduled = false,
  status = nil, -- "running" while a turn runs
  progress = nil, -- the latest $/progress message
  session = nil, -- the session shown (updates of other sessions are not rendered)
  opts = {},
}
M.view = view

local function define_highlights()
  local links = {
    AgentlsThought = "Comment",
    AgentlsUser = "Title",
    AgentlsAgent = "Title",
    AgentlsTool = "Special",
    AgentlsOk = "DiagnosticOk",
    AgentlsError = "DiagnosticError",
    AgentlsPending = "DiagnosticWarn",
    AgentlsNotice = "DiagnosticInfo",
    AgentlsAdded = "Added",
    AgentlsRemoved = "Removed",
  }
  for group, target in pairs(links) do
    vim.api.nvim_set_hl(0, group, { link = target, default = true })
  end
end

function M.configure(opts)
  view.opts = opts or {}
  define_highlights()
end

function M.state()
  if not view.state then
    view.state = R.new_state(view.opts.render)
  end
  return view.state
end

local function buf_valid()
  return view.buf and vim.api.nvim_buf_is_valid(view.buf)
end

--- The chat buffer (created hidden when missing).
function M.buffer()
  if buf_valid() then
    return view.buf
  end
  local existing = vim.fn.bufnr("agentls://chat")
  local buf = existing > 0 and existing or vim.api.nvim_create_buf(true, true)
  if existing <= 0 then
    vim.api.nvim_buf_set_name(buf, "agentls://chat")
  end
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].undolevels = -1
  vim.bo[buf].filetype = "markdown"
  vim.bo[buf].modifiable = false
  -- Tree-sitter markdown (bundled with Neovim 0.10+) renders code blocks and emphasis better.
  if view.opts.treesitter ~= false then
    pcall(vim.treesitter.start, buf, "markdown")
  end
  view.buf = buf
  view.counts = {}
  -- Re-render what the state already holds (a buffer wiped by the user comes back whole).
  if view.state then
    for i in ipairs(view.state.blocks) do
      view.state.changed[i] = true
    end
    M.flush()
  end
  return buf
end

local WINBAR = "%{%v:lua.require'agentls.chat'.winbar()%}"

local function setup_window(win)
  vim.wo[win].wrap = true
  vim.wo[win].linebreak = true
  vim.wo[win].number = false
  vim.wo[win].relativenumber = false
  vim.wo[win].signcolumn = "no"
  vim.wo[win].foldenable = false
  vim.wo[win].conceallevel = 2
  vim.wo[win].concealcursor = "n"
  if view.opts.winbar ~= false then
    vim.wo[win].winbar = WINBAR
  end
end

--- The chat window in the current tab, if any.
function M.window()
  if not buf_valid() then
    return nil
  end
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(win) == view.buf then
      return win
    end
  end
end

--- Show the chat buffer in a split (position from setup: right, left, below, above, tab, current).
--- Keeps the cursor in the current window unless `focus` is true.
function M.open(focus)
  local buf = M.buffer()
  local win = M.window()
  if not win then
    local from = vim.api.nvim_get_current_win()
    local pos = view.opts.position or "right"
    local width = view.opts.width or 0.4
    local height = view.opts.height or 0.4
    if pos == "tab" then
      vim.cmd("tab split")
    elseif pos == "current" then
      from = nil
    elseif pos == "left" or pos == "right" then
      local cols = width <= 1 and math.floor(vim.o.columns * width) or width
      vim.cmd((pos == "left" and "topleft " or "botright ") .. cols .. "vsplit")
    else
      local rows = height <= 1 and math.floor(vim.o.lines * height) or height
      vim.cmd((pos == "above" and "topleft " or "botright ") .. rows .. "split")
    end
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, buf)
    setup_window(win)
    local n = vim.api.nvim_buf_line_count(buf)
    vim.api.nvim_win_set_cursor(win, { n, 0 })
    if not focus and from and vim.api.nvim_win_is_valid(from) then
      vim.api.nvim_set_current_win(from)
    end
  elseif focus then
    vim.api.nvim_set_current_win(win)
  end
  return win
end

--- Show `session_id` from now on (nil: whichever session sends updates).
function M.show_session(session_id)
  view.session = session_id
end

function M.shown_session()
  return view.session
end

--- Whether updates of `session_id` belong in the chat.
function M.shows(session_id)
  return view.session == nil or session_id == nil or session_id == view.session
end

--- Forget the conversation shown (a new or loaded session) and empty the buffer.
function M.reset(render_opts)
  view.state = R.new_state(vim.tbl_extend("force", view.opts.render or {}, render_opts or {}))
  view.counts = {}
  if buf_valid() then
    vim.bo[view.buf].modifiable = true
    vim.api.nvim_buf_set_lines(view.buf, 0, -1, false, {})
    vim.api.nvim_buf_clear_namespace(view.buf, ns, 0, -1)
    vim.bo[view.buf].modifiable = false
  end
  M.redraw_status()
end

--- Write the changed blocks into the buffer, each replacing only its own lines.
function M.flush()
  view.scheduled = false
  local st = M.state()
  if not buf_valid() then
    return
  end
  local buf = view.buf
  local changed = R.take_changed(st)
  if #changed == 0 then
    M.redraw_status()
    return
  end
  -- Windows following the end of the buffer keep following it.
  local follow = {}
  local before_total = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf then
      local row = vim.api.nvim_win_get_cursor(win)[1]
      if row >= before_total then
        follow[#follow + 1] = win
      end
    end
  end
  vim.bo[buf].modifiable = true
  local empty = #view.counts == 0
  for _, i in ipairs(changed) do
    local block = st.blocks[i]
    local lines, hls = R.block_lines(st, block)
    local start = 0
    for j = 1, i - 1 do
      start = start + (view.counts[j] or 0)
    end
    local old = view.counts[i] or 0
    if empty then
      -- The buffer's one empty line goes away with the first block.
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
      empty = false
    else
      vim.api.nvim_buf_set_lines(buf, start, start + old, false, lines)
    end
    view.counts[i] = #lines
    for j = #view.counts + 1, i - 1 do
      view.counts[j] = view.counts[j] or 0
    end
    if #lines > 0 then
      vim.api.nvim_buf_clear_namespace(buf, ns, start, start + #lines)
      for _, h in ipairs(hls) do
        local row = start + h[1]
        local line = lines[h[1] + 1]
        local col_end = h[3] < 0 and #line or math.min(h[3], #line)
        if h[2] < col_end then
          vim.api.nvim_buf_set_extmark(buf, ns, row, h[2], { end_col = col_end, hl_group = h[4], priority = 150 })
        end
      end
    end
  end
  vim.bo[buf].modifiable = false
  local total = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(follow) do
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_set_cursor(win, { total, 0 })
    end
  end
  M.redraw_status()
end

function M.schedule_flush()
  if not view.scheduled then
    view.scheduled = true
    vim.schedule(M.flush)
  end
end

--- Fold an update into the shown chat and schedule a redraw.
function M.push(update)
  R.apply(M.state(), update)
  M.schedule_flush()
end

--- Run `fn(state)` then schedule a redraw.
function M.apply_state(fn)
  fn(M.state())
  M.schedule_flush()
end

function M.set_status(status)
  view.status = status
  if status ~= "running" then
    view.progress = nil
  end
  M.redraw_status()
end

function M.set_progress(message)
  view.progress = message
  M.redraw_status()
end

function M.redraw_status()
  if vim.api.nvim__redraw then
    pcall(vim.api.nvim__redraw, { statusline = true, winbar = true })
  else
    vim.cmd("redrawstatus!")
  end
end

local function esc(s)
  return (tostring(s):gsub("%%", "%%%%"))
end

--- A short status: "agentls · running · ctx 12k/128k (9%)", for statuslines and the winbar.
function M.statusline()
  local st = M.state()
  local parts = { "agentls" }
  if view.status == "running" then
    parts[#parts + 1] = view.progress and view.progress ~= "" and view.progress or "running…"
  end
  local usage = R.usage_string(st)
  if usage ~= "" then
    parts[#parts + 1] = usage
  end
  return table.concat(parts, " · ")
end

function M.winbar()
  local st = M.state()
  local left = st.title and (" " .. st.title) or " agentls chat"
  return esc(left) .. "%=" .. esc(M.statusline()) .. " "
end

--- The buffer's lines (for tests).
function M.lines()
  if not buf_valid() then
    return {}
  end
  return vim.api.nvim_buf_get_lines(view.buf, 0, -1, false)
end

return M
