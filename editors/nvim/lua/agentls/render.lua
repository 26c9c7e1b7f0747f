-- agentls.render: the chat as pure data, no buffer or window.
--
-- A chat *state* that `apply(state, update)` folds ACP `SessionUpdate`s into, and
-- `block_lines(state, block)` that turns one block into lines plus highlights. `agentls.chat` writes the
-- changed blocks into the chat buffer.

local M = {}

local ICON = { pending = "…", in_progress = "…", completed = "✓", failed = "✗" }
local STATUS_GROUP = {
  pending = "AgentlsPending",
  in_progress = "AgentlsPending",
  completed = "AgentlsOk",
  failed = "AgentlsError",
}

--- A new, empty chat state.
--- opts: { root = "/abs/workspace" (paths are shown relative to it), thoughts = "dim"|"collapsed"|"hidden",
---         tool_output_lines = 3, terminal_output = function(terminalId) -> string|nil }
function M.new_state(opts)
  return {
    opts = vim.tbl_extend("keep", opts or {}, { thoughts = "dim", tool_output_lines = 3 }),
    blocks = {},
    tools = {}, -- toolCallId -> block
    compactions = {}, -- compactionId -> block
    changed = {}, -- block index -> true, until take_changed()
    turn_start = 0, -- index of the current turn's first block (its user block)
    turn_answered = false, -- an agent message arrived in the current turn
    header_open = false, -- the "## agentls" header of the current turn is written
    plan = nil, -- the plan block of the current turn
    usage = nil, -- { used = n, size = n }
    title = nil,
  }
end

local function add(st, block)
  local prev = st.blocks[#st.blocks]
  block.index = #st.blocks + 1
  block.after = prev and prev.kind or nil
  block.after_prev = prev and prev.after or nil
  st.blocks[block.index] = block
  st.changed[block.index] = true
  return block
end

local function touch(st, block)
  st.changed[block.index] = true
end

--- Indices of the blocks changed since the last call, ascending.
function M.take_changed(st)
  local list = vim.tbl_keys(st.changed)
  table.sort(list)
  st.changed = {}
  return list
end

local function content_text(content)
  if type(content) ~= "table" then
    return ""
  end
  if content.type == "text" then
    return content.text or ""
  elseif content.type == "image" then
    return "[image]"
  elseif content.type == "resource_link" then
    return ("[%s](%s)"):format(content.name or content.uri or "link", content.uri or "")
  elseif content.type == "resource" then
    local res = content.resource or {}
    return res.text or ("[" .. (res.uri or "resource") .. "]")
  end
  return ""
end

local function agent_header(st)
  if not st.header_open then
    st.header_open = true
    add(st, { kind = "header", text = "agentls" })
  end
end

local function last_block(st)
  return st.blocks[#st.blocks]
end

--- Start a turn: a user block with the prompt's text.
function M.begin_turn(st, text)
  local block = add(st, { kind = "user", text = text or "" })
  st.turn_start = block.index
  st.turn_answered = false
  st.header_open = false
  st.plan = nil
  return block
end

local function stream(st, kind, text)
  agent_header(st)
  local last = last_block(st)
  if last and last.kind == kind then
    last.text = last.text .. text
    touch(st, last)
  else
    add(st, { kind = kind, text = text })
  end
end

local function tool_block(st, id)
  local block = st.tools[id]
  if not block then
    agent_header(st)
    block = add(st, { kind = "tool", id = id, title = "", status = "pending", content = {} })
    st.tools[id] = block
  end
  return block
end

local function merge_tool(block, u)
  if u.title and u.title ~= vim.NIL then
    block.title = u.title
  end
  if u.kind and u.kind ~= vim.NIL then
    block.tool_kind = u.kind
  end
  if u.status and u.status ~= vim.NIL then
    block.status = u.status
    if u.status ~= "pending" then
      block.awaiting = nil
    end
  end
  if type(u.content) == "table" then
    block.content = u.content
  end
  if type(u.locations) == "table" then
    block.locations = u.locations
  end
  local raw = type(u.rawInput) == "table" and u.rawInput or nil
  if raw and (raw.goal ~= nil or raw.tasks ~= nil) then
    block.delegate = true -- a delegate_task card: shown, with one progress line per subagent
  end
end

-- The delegate_task call a subagent's tool call belongs to (`_meta.agentls.parentToolCallId`), or nil.
local function parent_of(u)
  local meta = type(u._meta) == "table" and type(u._meta.agentls) == "table" and u._meta.agentls or nil
  local parent = meta and meta.parentToolCallId
  return type(parent) == "string" and parent ~= "" and parent or nil
end

local handlers = {}

function handlers.agent_message_chunk(st, u)
  st.turn_answered = true
  stream(st, "message", content_text(u.content))
end

function handlers.agent_thought_chunk(st, u)
  stream(st, "thought", content_text(u.content))
end

function handlers.user_message_chunk(st, u)
  local last = last_block(st)
  local text = content_text(u.content)
  if last and last.kind == "user" then
    last.text = last.text .. text
    touch(st, last)
  else
    M.begin_turn(st, text)
  end
end

function handlers.tool_call(st, u)
  local block = tool_block(st, u.toolCallId or "?")
  merge_tool(block, u)
  local parent = parent_of(u)
  if parent and not block.parent then
    block.parent = parent -- drawn indented under its delegate card
    local card = st.tools[parent]
    if card and not card.delegate then
      card.delegate = true
      touch(st, card)
    end
  end
  touch(st, block)
end

handlers.tool_call_update = handlers.tool_call

function handlers.plan(st, u)
  local entries = type(u.entries) == "table" and u.entries or {}
  if st.plan and st.blocks[st.plan.index] == st.plan then
    st.plan.entries = entries
    touch(st, st.plan)
  else
    agent_header(st)
    st.plan = add(st, { kind = "plan", entries = entries })
  end
end

function handlers.usage_update(st, u)
  st.usage = { used = tonumber(u.used) or 0, size = tonumber(u.size) or 0 }
end

function handlers.session_info_update(st, u)
  if type(u.title) == "string" then
    st.title = u.title
  end
end

function handlers.compaction_update(st, u)
  local id = u.compactionId or "?"
  local block = st.compactions[id]
  if not block then
    block = add(st, { kind = "compaction", id = id })
    st.compactions[id] = block
  end
  block.status = u.status or block.status
  local meta = type(u._meta) == "table" and type(u._meta.agentls) == "table" and u._meta.agentls or nil
  if meta then
    block.before = meta.tokensBefore or block.before
    block.after_tokens = meta.tokensAfter or block.after_tokens
    block.messages_before = meta.messagesBefore or block.messages_before
    block.messages_after = meta.messagesAfter or block.messages_after
  end
  touch(st, block)
end

--- Fold one `SessionUpdate` into the state. Unknown kinds are ignored. Returns true when blocks changed.
function M.apply(st, update)
  if type(update) ~= "table" then
    return false
  end
  local h = handlers[update.sessionUpdate]
  if not h then
    return false
  end
  h(st, update)
  return next(st.changed) ~= nil
end

--- Mark a tool call as waiting for the user's approval (or not).
function M.set_awaiting(st, tool_call_id, awaiting)
  local block = st.tools[tool_call_id]
  if block then
    block.awaiting = awaiting or nil
    touch(st, block)
  end
end

--- A line of information ("interrupted", an error, a steer). level: "info" | "warn" | "error".
function M.notice(st, text, level)
  return add(st, { kind = "notice", text = text, level = level or "info" })
end

--- The end of a turn: the final answer if nothing streamed, then interruption or error notices.
--- `result` is the agent/turn result, `err` a JSON-RPC error.
function M.end_turn(st, result, err)
  if err then
    M.notice(st, "✗ " .. (err.message or tostring(err)), "error")
    return
  end
  result = result or {}
  local final = result.finalResponse
  if not st.turn_answered and type(final) == "string" and final ~= "" then
    agent_header(st)
    add(st, { kind = "message", text = final })
    st.turn_answered = true
  end
  if result.interrupted then
    M.notice(st, "⏹ interrupted", "warn")
  end
  local e = result.error
  if type(e) == "table" then
    local what = e.message or vim.inspect(e)
    if e.category then
      what = e.category .. ": " .. what
    end
    M.notice(st, "✗ " .. what, "error")
  elseif type(e) == "string" and e ~= "" then
    M.notice(st, "✗ " .. e, "error")
  elseif result.failed and not result.interrupted then
    M.notice(st, "✗ the turn failed (" .. tostring(result.exitReason or "unknown reason") .. ")", "error")
  end
end

--- After agent/compress answered: complete the latest compaction block, or add a notice.
function M.compacted(st, result)
  result = result or {}
  local latest
  for i = #st.blocks, math.max(1, #st.blocks - 5), -1 do
    if st.blocks[i].kind == "compaction" then
      latest = st.blocks[i]
      break
    end
  end
  local block = latest or add(st, { kind = "compaction", id = "result", status = "completed" })
  if block.status == nil or block.status == "in_progress" then
    block.status = "completed"
  end
  block.before = block.before or result.tokensBefore
  block.after_tokens = block.after_tokens or result.tokensAfter
  block.messages_before = block.messages_before or result.messagesBefore
  block.messages_after = block.messages_after or result.messagesAfter
  block.manual = true -- asked for: say so even when nothing changed
  touch(st, block)
end

--- 12345 -> "12.3k"
function M.short_number(n)
  n = tonumber(n) or 0
  local function trim(s)
    return (s:gsub("%.0([kM])$", "%1"))
  end
  if n < 1000 then
    return tostring(math.floor(n))
  elseif n < 1e6 then
    return trim(("%.1fk"):format(n / 1000))
  end
  return trim(("%.1fM"):format(n / 1e6))
end

--- "ctx 12.3k/128k (10%)" or "" without usage.
function M.usage_string(st)
  local u = st.usage
  if not u or (u.size or 0) <= 0 then
    return ""
  end
  local pct = math.floor(100 * u.used / u.size + 0.5)
  return ("ctx %s/%s (%d%%)"):format(M.short_number(u.used), M.short_number(u.size), pct)
end

local function count_lines(text)
  if text == nil or text == vim.NIL or text == "" then
    return 0
  end
  local _, n = text:gsub("\n", "")
  if text:sub(-1) ~= "\n" then
    n = n + 1
  end
  return n
end

--- Lines added and removed between two texts (old may be nil for a new file).
function M.diff_stats(old, new)
  if old == nil or old == vim.NIL or old == "" then
    return count_lines(new), 0
  end
  new = (new == nil or new == vim.NIL) and "" or new
  local added, removed = 0, 0
  local fn = vim.text and vim.text.diff or vim.diff
  local hunks = fn(old, new, { result_type = "indices" }) or {}
  for _, h in ipairs(hunks) do
    removed = removed + h[2]
    added = added + h[4]
  end
  return added, removed
end

function M.relpath(root, path)
  if type(path) ~= "string" then
    return "?"
  end
  if path:match("^file://") then
    path = vim.uri_to_fname(path)
  end
  if root and root ~= "" then
    local prefix = root:sub(-1) == "/" and root or root .. "/"
    if path:sub(1, #prefix) == prefix then
      return path:sub(#prefix + 1)
    end
  end
  return path
end

local function split(text)
  return vim.split(text or "", "\n", { plain = true })
end

-- Kinds that follow each other without a blank line between them.
local TIGHT = { tool = true }

--- The lines of one block and its highlights: `lines, hls` where hls = { {row, col_start, col_end, group} }
--- with rows relative to the block and byte columns (col_end -1 = end of line).
function M.block_lines(st, block)
  local lines, hls = {}, {}
  local function push(line, group, col_start, col_end)
    lines[#lines + 1] = line
    if group then
      hls[#hls + 1] = { #lines - 1, col_start or 0, col_end or -1, group }
    end
  end
  local function hl(group, col_start, col_end)
    hls[#hls + 1] = { #lines - 1, col_start, col_end, group }
  end
  local kind = block.kind
  local after = block.after
  if after == "thought" and st.opts.thoughts == "hidden" then
    after = block.after_prev -- a hidden thought takes no room
  end
  local gap = after ~= nil and after ~= "header"
    and (kind == "user" or kind == "header" or after ~= kind or not TIGHT[kind])
  if kind == "message" and after == "message" then
    gap = false
  end
  if gap then
    push("")
  end

  if kind == "user" then
    push("## You", "AgentlsUser")
    for _, l in ipairs(split(block.text)) do
      push(l)
    end
  elseif kind == "header" then
    push("## " .. block.text, "AgentlsAgent")
  elseif kind == "message" then
    for _, l in ipairs(split(block.text)) do
      push(l)
    end
  elseif kind == "thought" then
    local mode = st.opts.thoughts
    if mode == "collapsed" then
      push(("┊ thinking (%d chars)"):format(#vim.trim(block.text)), "AgentlsThought")
    elseif mode ~= "hidden" then
      for _, l in ipairs(split(vim.trim(block.text))) do
        push("┊ " .. l, "AgentlsThought")
      end
    elseif gap then
      lines = {}
    end
  elseif kind == "tool" and block.tool_kind == "think" and block.status ~= "failed" and not block.delegate then
    lines, hls = {}, {} -- "Update plan": the plan block shows it
  elseif kind == "tool" then
    local title = block.title ~= "" and block.title or (block.tool_kind or "tool")
    title = title:gsub("\n", " ")
    local icon = ICON[block.status] or "…"
    local line = "▸ " .. title .. " "
    if block.awaiting and block.status == "pending" then
      push(line .. "⏸ awaiting approval")
      hl("AgentlsPending", #line, -1)
    else
      push(line .. icon)
      hl(STATUS_GROUP[block.status] or "AgentlsPending", #line, -1)
    end
    hl("AgentlsTool", 0, #"▸")
    local shown = 0
    -- Output lines of a command or a failed tool, up to tool_output_lines in all.
    local function output_lines(text)
      for _, l in ipairs(split(vim.trim(text))) do
        if shown >= st.opts.tool_output_lines then
          return
        end
        shown = shown + 1
        push("    │ " .. l:gsub("\t", "  "), "AgentlsThought")
      end
    end
    for _, c in ipairs(block.content or {}) do
      if c.type == "diff" then
        local added, removed = M.diff_stats(c.oldText, c.newText)
        local head = "    ✎ " .. M.relpath(st.opts.root, c.path)
        if c.oldText == nil or c.oldText == vim.NIL then
          head = head .. " (new)"
        end
        local plus, minus = " +" .. added, " −" .. removed
        push(head .. plus .. minus)
        hl("AgentlsAdded", #head, #head + #plus)
        hl("AgentlsRemoved", #head + #plus, -1)
      elseif c.type == "terminal" then
        local out = st.opts.terminal_output and st.opts.terminal_output(c.terminalId) or nil
        if type(out) == "string" and vim.trim(out) ~= "" then
          output_lines(out)
        else
          push("    ⌨ terminal " .. tostring(c.terminalId), "AgentlsThought")
        end
      elseif c.type == "content" and block.delegate and block.status ~= "failed" then
        for i, l in ipairs(split(vim.trim(content_text(c.content)))) do -- one line per subagent
          if i > 8 then
            break
          end
          push("    · " .. l, "AgentlsThought")
        end
      elseif c.type == "content" and shown < st.opts.tool_output_lines
        and (block.tool_kind == "execute" or block.status == "failed") then
        output_lines(content_text(c.content))
      end
    end
    if block.parent then -- a subagent's call: indented under its delegate card
      for i, l in ipairs(lines) do
        if l ~= "" then
          lines[i] = "    " .. l
        end
      end
      for _, h in ipairs(hls) do
        h[2] = h[2] + 4
        if h[3] ~= -1 then
          h[3] = h[3] + 4
        end
      end
    end
  elseif kind == "plan" then
    push("Plan:", "AgentlsAgent")
    for _, e in ipairs(block.entries or {}) do
      local box = ({ completed = "[x]", in_progress = "[~]" })[e.status] or "[ ]"
      push(("- %s %s"):format(box, tostring(e.content or ""):gsub("\n", " ")))
      if e.status == "in_progress" then
        hl("AgentlsPending", 2, 5)
      elseif e.status == "completed" then
        hl("AgentlsOk", 2, 5)
      end
    end
  elseif kind == "compaction" then
    local s = block.status
    local detail = ""
    if block.before and block.after_tokens then
      detail = (" (%s → %s tokens)"):format(M.short_number(block.before), M.short_number(block.after_tokens))
    end
    local noop = block.before ~= nil and block.before == block.after_tokens
      and block.messages_before == block.messages_after
    if s == "completed" and noop and not block.manual then
      lines = {} -- an automatic check that changed nothing
    elseif s == "completed" and noop then
      push(("⟲ nothing to compact (%s tokens)"):format(M.short_number(block.before)), "AgentlsNotice")
    elseif s == "completed" then
      push("⟲ context compacted" .. detail, "AgentlsNotice")
    elseif s == "failed" then
      push("✗ compaction failed", "AgentlsError")
    elseif s == "cancelled" then
      push("compaction cancelled", "AgentlsNotice")
    else
      push("⟳ compacting context…", "AgentlsPending")
    end
  elseif kind == "notice" then
    local group = ({ error = "AgentlsError", warn = "AgentlsPending" })[block.level] or "AgentlsNotice"
    for _, l in ipairs(split(block.text)) do
      push(l, group)
    end
  end
  return lines, hls
end

--- Every line of the state, for tests and one-shot renders.
function M.render(st)
  local out = {}
  for _, block in ipairs(st.blocks) do
    local lines = M.block_lines(st, block)
    vim.list_extend(out, lines)
  end
  return out
end

return M
