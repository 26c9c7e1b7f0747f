-- Unit tests of the pure chat renderer (agentls.render) and of small pure helpers, no server.
local H = dofile(vim.fn.fnamemodify(arg[0], ":p:h") .. "/helpers.lua")

H.run("render", function()
  local R = require("agentls.render")

  -- A whole turn: prompt, thought, tool calls updated in place, a diff, a plan, streamed text.
  local st = R.new_state({ root = "/ws" })
  R.begin_turn(st, "Fix the greeting")
  R.apply(st, { sessionUpdate = "agent_thought_chunk", content = { type = "text", text = "Let me " } })
  R.apply(st, { sessionUpdate = "agent_thought_chunk", content = { type = "text", text = "look." } })
  R.apply(st, { sessionUpdate = "tool_call", toolCallId = "c1", title = "Read greet.py", kind = "read",
    status = "pending" })
  R.apply(st, { sessionUpdate = "tool_call", toolCallId = "c2", title = "Edit greet.py", kind = "edit",
    status = "pending" })
  R.apply(st, { sessionUpdate = "tool_call_update", toolCallId = "c1", status = "completed" })
  R.apply(st, { sessionUpdate = "tool_call_update", toolCallId = "c2", status = "completed",
    content = { { type = "diff", path = "/ws/greet.py", oldText = "a\nb\nc\n", newText = "a\nB\nc\nd\n" } } })
  R.apply(st, { sessionUpdate = "plan", entries = {
    { content = "read", status = "completed", priority = "medium" },
    { content = "edit", status = "in_progress", priority = "medium" },
    { content = "test", status = "pending", priority = "low" },
  } })
  R.apply(st, { sessionUpdate = "plan", entries = {
    { content = "read", status = "completed" },
    { content = "edit", status = "completed" },
    { content = "test", status = "pending" },
  } })
  R.apply(st, { sessionUpdate = "agent_message_chunk", content = { type = "text", text = "Done: " } })
  R.apply(st, { sessionUpdate = "agent_message_chunk", content = { type = "text", text = "fixed it.\nBye." } })
  R.apply(st, { sessionUpdate = "usage_update", used = 12345, size = 128000 })
  R.apply(st, { sessionUpdate = "session_info_update", title = "Greeting fix" })
  R.apply(st, { sessionUpdate = "something_new", foo = 1 }) -- ignored
  R.end_turn(st, { finalResponse = "Done: fixed it.\nBye.", interrupted = false, completed = true })

  H.eq(R.render(st), {
    "## You",
    "Fix the greeting",
    "",
    "## agentls",
    "┊ Let me look.",
    "",
    "▸ Read greet.py ✓",
    "▸ Edit greet.py ✓",
    "    ✎ greet.py +2 −1",
    "",
    "Plan:",
    "- [x] read",
    "- [x] edit",
    "- [ ] test",
    "",
    "Done: fixed it.",
    "Bye.",
  }, "a whole turn renders")
  H.eq(R.usage_string(st), "ctx 12.3k/128k (10%)", "usage string")
  H.eq(st.title, "Greeting fix", "title")

  -- Changed-block tracking: an update touches only its block.
  R.take_changed(st)
  R.apply(st, { sessionUpdate = "tool_call_update", toolCallId = "c1", status = "failed" })
  local changed = R.take_changed(st)
  H.eq(#changed, 1, "one block changed")
  H.eq(R.block_lines(st, st.blocks[changed[1]]), { "", "▸ Read greet.py ✗" }, "the tool line is updated in place")

  -- Awaiting approval, and a tool call seen first through its update.
  local s2 = R.new_state()
  R.begin_turn(s2, "run it")
  R.apply(s2, { sessionUpdate = "tool_call_update", toolCallId = "t", title = "make test", kind = "execute",
    status = "pending" })
  R.set_awaiting(s2, "t", true)
  H.eq(R.render(s2)[#R.render(s2)], "▸ make test ⏸ awaiting approval", "awaiting approval")
  R.apply(s2, { sessionUpdate = "tool_call_update", toolCallId = "t", status = "in_progress",
    content = { { type = "content", content = { type = "text", text = "$ make test\nok 1\nok 2\nok 3\nok 4" } } } })
  local lines = R.render(s2)
  H.eq(vim.list_slice(lines, #lines - 3), { "▸ make test …", "    │ $ make test", "    │ ok 1", "    │ ok 2" },
    "tool text output is capped at tool_output_lines")

  -- Terminal output comes from the plugin's own terminals; "think" tools (the plan) take no line.
  local s7 = R.new_state({ terminal_output = function(id)
    return id == "t1" and "line one\nline two\n" or nil
  end })
  R.begin_turn(s7, "go")
  R.apply(s7, { sessionUpdate = "tool_call", toolCallId = "p", title = "Update plan", kind = "think",
    status = "completed" })
  R.apply(s7, { sessionUpdate = "tool_call", toolCallId = "x", title = "make", kind = "execute",
    status = "completed", content = { { type = "terminal", terminalId = "t1" } } })
  R.apply(s7, { sessionUpdate = "tool_call", toolCallId = "y", title = "make again", kind = "execute",
    status = "completed", content = { { type = "terminal", terminalId = "gone" } } })
  H.eq(R.render(s7), { "## You", "go", "", "## agentls", "▸ make ✓", "    │ line one", "    │ line two",
    "▸ make again ✓", "    ⌨ terminal gone" }, "terminal output and hidden plan tool")

  -- A delegate_task card (kind think, yet shown) with its subagents' calls indented under it.
  local s8 = R.new_state({})
  R.begin_turn(s8, "explore")
  R.apply(s8, { sessionUpdate = "tool_call", toolCallId = "d", title = "Delegate 2 tasks", kind = "think",
    status = "pending", rawInput = { tasks = { { goal = "a" }, { goal = "b" } } } })
  R.apply(s8, { sessionUpdate = "tool_call", toolCallId = "d.1.c", title = "Read a.py", kind = "read",
    status = "pending", _meta = { agentls = { parentToolCallId = "d" } } })
  R.apply(s8, { sessionUpdate = "tool_call_update", toolCallId = "d", status = "in_progress", content = {
    { type = "content", content = { type = "text", text = "1. a — step 1: Read a.py\n2. b — waiting" } } } })
  R.apply(s8, { sessionUpdate = "tool_call_update", toolCallId = "d.1.c", status = "completed" })
  H.eq(R.render(s8), { "## You", "explore", "", "## agentls", "▸ Delegate 2 tasks …",
    "    · 1. a — step 1: Read a.py", "    · 2. b — waiting", "    ▸ Read a.py ✓" }, "delegate card and nesting")
  -- A client that meets the child first still nests it, and then shows the card.
  local s9 = R.new_state({})
  R.begin_turn(s9, "x")
  R.apply(s9, { sessionUpdate = "tool_call", toolCallId = "e", title = "Delegate: x", kind = "think",
    status = "completed" })
  R.apply(s9, { sessionUpdate = "tool_call", toolCallId = "e.1.c", title = "Search", kind = "search",
    status = "failed", _meta = { agentls = { parentToolCallId = "e" } } })
  H.eq(R.render(s9), { "## You", "x", "", "## agentls", "▸ Delegate: x ✓", "    ▸ Search ✗" }, "card shown for a child")

  -- Interrupted and failed turns, the final answer when nothing streamed, compaction, notices.
  local s3 = R.new_state({ thoughts = "collapsed" })
  R.begin_turn(s3, "q")
  R.apply(s3, { sessionUpdate = "agent_thought_chunk", content = { type = "text", text = "hmm" } })
  R.end_turn(s3, { finalResponse = "Answer.", interrupted = true })
  R.apply(s3, { sessionUpdate = "compaction_update", compactionId = "k", status = "in_progress" })
  R.apply(s3, { sessionUpdate = "compaction_update", compactionId = "k", status = "completed",
    _meta = { agentls = { tokensBefore = 20000, tokensAfter = 3100 } } })
  R.end_turn(s3, nil, { code = -32603, message = "boom" })
  R.end_turn(s3, { error = { category = "auth", message = "bad key" }, failed = true })
  H.eq(R.render(s3), {
    "## You", "q", "", "## agentls", "┊ thinking (3 chars)", "", "Answer.", "", "⏹ interrupted", "",
    "⟲ context compacted (20k → 3.1k tokens)", "", "✗ boom", "", "✗ auth: bad key",
  }, "notices, compaction, collapsed thoughts")

  -- Replay: user chunks start turns; hidden thoughts take no lines.
  local s4 = R.new_state({ thoughts = "hidden" })
  R.apply(s4, { sessionUpdate = "user_message_chunk", content = { type = "text", text = "hello" } })
  R.apply(s4, { sessionUpdate = "agent_thought_chunk", content = { type = "text", text = "x" } })
  R.apply(s4, { sessionUpdate = "agent_message_chunk", content = { type = "text", text = "hi" } })
  R.apply(s4, { sessionUpdate = "user_message_chunk", content = { type = "text", text = "again" } })
  H.eq(R.render(s4), { "## You", "hello", "", "## agentls", "hi", "", "## You", "again" }, "replay")

  -- compacted() without an update adds a block from the agent/compress result.
  local s5 = R.new_state()
  R.compacted(s5, { tokensBefore = 900, tokensAfter = 100 })
  H.eq(R.render(s5), { "⟲ context compacted (900 → 100 tokens)" }, "compacted from the result")

  -- An automatic pass that changed nothing takes no room; asked for, it says so.
  local s6 = R.new_state()
  R.apply(s6, { sessionUpdate = "compaction_update", compactionId = "a", status = "completed",
    _meta = { agentls = { tokensBefore = 600, tokensAfter = 600, messagesBefore = 4, messagesAfter = 4 } } })
  H.eq(R.render(s6), {}, "no-op automatic compaction is hidden")
  R.apply(s6, { sessionUpdate = "compaction_update", compactionId = "b", status = "completed",
    _meta = { agentls = { tokensBefore = 600, tokensAfter = 600, messagesBefore = 4, messagesAfter = 4 } } })
  R.compacted(s6, { tokensBefore = 600, tokensAfter = 600, messagesBefore = 4, messagesAfter = 4 })
  H.eq(R.render(s6), { "", "⟲ nothing to compact (600 tokens)" }, "manual no-op compaction")

  -- Helpers.
  H.eq({ R.diff_stats(nil, "x\ny\n") }, { 2, 0 }, "new file diff stats")
  H.eq({ R.diff_stats("x\n", "") }, { 0, 1 }, "deleted content")
  H.eq(R.short_number(999), "999", "short number")
  H.eq(R.short_number(1000), "1k", "short number k")
  H.eq(R.short_number(2500000), "2.5M", "short number M")
  H.eq(R.relpath("/ws", "file:///ws/a/b.py"), "a/b.py", "relpath from a uri")
  H.eq(R.relpath("/ws", "/other/x"), "/other/x", "relpath outside the root")

  -- Highlights point at real columns.
  local _, hls = R.block_lines(st, st.blocks[st.tools["c2"].index])
  local found = {}
  for _, h in ipairs(hls) do
    found[h[4]] = true
  end
  H.ok(found.AgentlsOk and found.AgentlsAdded and found.AgentlsRemoved, "tool highlights: " .. vim.inspect(hls))

  -- init_options maps snake_case to PROTOCOL's camelCase; check() names bad values.
  local A = require("agentls")
  H.eq(A.init_options({ model = "m", base_url = "http://x/v1", provider = "openai", api_key_env = "K",
    approval = "yolo", max_iterations = 5, init_options = { toolMode = "json" } }),
    { model = "m", baseUrl = "http://x/v1", provider = "openai", apiKeyEnv = "K", approval = "yolo",
      maxIterations = 5, toolMode = "json" }, "init options")
  H.ok(A.check({ cmd = { "agentls" }, approval = "maybe" }):find("approval"), "check names the bad key")
  H.eq(A.check({ cmd = { "agentls", "lsp" }, approval = "ask" }), nil, "a good config passes")

  -- A selection travels as the turn's context (LSP positions), with its file as the active file.
  local C = require("agentls.commands")
  H.eq(C.build_prompt("explain"), "explain", "the prompt is the instruction")
  local sel = { file = "/ws/a.py", path = "a.py", filetype = "python", text = "x = 1", line1 = 3, line2 = 4,
    range = { start = { line = 2, character = 0 }, ["end"] = { line = 4, character = 0 } } }
  local active = { path = "/ws/a.py", languageId = "python", cursor = { line = 2, character = 0 } }
  H.eq(C.build_context(sel, active), {
    selection = { path = "/ws/a.py", languageId = "python", text = "x = 1", range = sel.range },
    activeFile = active,
  }, "context with a selection")
  H.eq(C.build_context(nil, active), { activeFile = active }, "the active file alone")
  H.eq(C.build_context(nil, nil), nil, "nothing to send")

  -- agent/diagnostics: vim.diagnostic.get as LSP Diagnostics, errors first; unknown or unopened files empty.
  local D = require("agentls.diagnostics")
  vim.cmd("enew")
  local dbuf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_name(dbuf, vim.fn.getcwd() .. "/diag.py")
  vim.api.nvim_buf_set_lines(dbuf, 0, -1, false, { "x = (", "y = 1" })
  local ns = vim.api.nvim_create_namespace("agentls-test-lint")
  vim.diagnostic.set(ns, dbuf, {
    { lnum = 1, col = 0, severity = vim.diagnostic.severity.WARN, message = "unused y", source = "lint", code = 7 },
    { lnum = 0, col = 4, end_col = 5, severity = vim.diagnostic.severity.ERROR, message = "'(' was never closed" },
  })
  local uri = vim.uri_from_bufnr(dbuf)
  local answer = D.answer({ uris = { uri, "file:///nowhere/x.py" }, settleMs = 0 }, function() end, nil)
  H.eq(answer, { diagnostics = {
    { uri = uri, diagnostics = {
      { range = { start = { line = 0, character = 4 }, ["end"] = { line = 0, character = 5 } }, severity = 1,
        message = "'(' was never closed" },
      { range = { start = { line = 1, character = 0 }, ["end"] = { line = 1, character = 0 } }, severity = 2,
        message = "unused y", source = "lint", code = "7" },
    } },
    { uri = "file:///nowhere/x.py", diagnostics = {} },
  } }, "diagnostics answer")

  -- Terminal output keeps the tail on a UTF-8 boundary.
  local T = require("agentls.terminal")
  H.eq({ T.keep_tail("abcdef", 3) }, { "def", true }, "keep tail")
  H.eq({ T.keep_tail("aé", 1) }, { "", true }, "no half characters")
  H.eq({ T.keep_tail("ab", 5) }, { "ab", false }, "short output kept")
end)
