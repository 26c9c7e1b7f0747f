import assert from 'node:assert/strict';
import type { SessionUpdate } from '../../src/acp';
import type { ToWebview } from '../../src/protocol';
import { ChatModel, formatTokens, relativeTime, usagePercent, type AgentItem, type ToolItem } from '../../src/webview/state';

const upd = (update: SessionUpdate): ToWebview => ({ type: 'update', sessionId: 's1', update });
const text = (t: string) => ({ type: 'text' as const, text: t });

function model(...msgs: ToWebview[]): ChatModel {
  const m = new ChatModel();
  m.apply({ type: 'reset', sessionId: 's1' });
  for (const msg of msgs) m.apply(msg);
  return m;
}

describe('chat state reducer', () => {
  it('keeps a subagent call\'s delegate card (_meta.agentls.parentToolCallId)', () => {
    const m = model(
      upd({ sessionUpdate: 'tool_call', toolCallId: 'd1', title: 'Delegate: find it', kind: 'think', status: 'pending' }),
      upd({ sessionUpdate: 'tool_call', toolCallId: 'd1.1.c1', title: 'Read a.py', kind: 'read', status: 'pending',
        _meta: { agentls: { parentToolCallId: 'd1' } } }),
      upd({ sessionUpdate: 'tool_call_update', toolCallId: 'd1.1.c1', status: 'completed' }),
      upd({ sessionUpdate: 'tool_call', toolCallId: 'x', title: 'Odd', kind: 'read', status: 'pending',
        _meta: { agentls: { parentToolCallId: 42 } } }),
    );
    const tools = m.items.filter((i): i is ToolItem => i.kind === 'tool');
    assert.deepEqual(tools.map((t) => [t.toolCallId, t.parentToolCallId, t.status]),
      [['d1', null, 'pending'], ['d1.1.c1', 'd1', 'completed'], ['x', null, 'pending']]);
  });

  it('concatenates agent message chunks into one message', () => {
    const m = model(
      { type: 'userMessage', text: 'hi' },
      upd({ sessionUpdate: 'agent_message_chunk', content: text('Hel') }),
      upd({ sessionUpdate: 'agent_message_chunk', content: text('lo') }),
    );
    assert.equal(m.items.length, 2);
    assert.equal((m.items[1] as AgentItem).text, 'Hello');
  });

  it('starts a new message after a tool call or a new messageId', () => {
    const m = model(
      upd({ sessionUpdate: 'agent_message_chunk', content: text('a'), messageId: 'm1' }),
      upd({ sessionUpdate: 'agent_message_chunk', content: text('b'), messageId: 'm2' }),
      upd({ sessionUpdate: 'tool_call', toolCallId: 't1', title: 'Read', kind: 'read', status: 'pending' }),
      upd({ sessionUpdate: 'agent_message_chunk', content: text('c') }),
    );
    assert.deepEqual(
      m.items.map((i) => i.kind + ':' + ('text' in i ? i.text : '')),
      ['agent:a', 'agent:b', 'tool:', 'agent:c'],
    );
  });

  it('drops the text and thought of a message a retried stream replaces', () => {
    const m = model(
      { type: 'userMessage', text: 'hi' },
      upd({ sessionUpdate: 'agent_thought_chunk', content: text('think'), messageId: 'm1' }),
      upd({ sessionUpdate: 'agent_message_chunk', content: text('Hello '), messageId: 'm1' }),
      upd({ sessionUpdate: 'agent_message_chunk', content: text('Hi there'), messageId: 'm2',
            _meta: { agentls: { replaces: 'm1' } } } as SessionUpdate),
    );
    assert.deepEqual(m.items.map((i) => i.kind + ':' + ('text' in i ? i.text : '')), ['user:hi', 'agent:Hi there']);
  });

  it('updates tool calls in place and bumps their rev', () => {
    const m = model(
      upd({ sessionUpdate: 'tool_call', toolCallId: 't1', title: 'Edit app.py', kind: 'edit', status: 'pending', locations: [{ path: '/w/app.py', line: 3 }] }),
    );
    const before = (m.items[0] as ToolItem).rev;
    m.apply(upd({ sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'completed', content: [{ type: 'diff', path: '/w/app.py', oldText: 'a', newText: 'b' }] }));
    assert.equal(m.items.length, 1);
    const t = m.items[0] as ToolItem;
    assert.equal(t.status, 'completed');
    assert.equal(t.toolKind, 'edit');
    assert.equal(t.title, 'Edit app.py');
    assert.deepEqual(t.locations, [{ path: '/w/app.py', line: 3 }]);
    assert.equal(t.content.length, 1);
    assert.ok(t.rev > before);
  });

  it('creates a card for an update of an unknown tool call', () => {
    const m = model(upd({ sessionUpdate: 'tool_call_update', toolCallId: 'zz', status: 'in_progress' }));
    assert.equal((m.items[0] as ToolItem).status, 'in_progress');
  });

  it('ignores invalid kinds and statuses', () => {
    const m = model(upd({ sessionUpdate: 'tool_call', toolCallId: 't', title: 'x', kind: 'bogus' as never, status: 'weird' as never }));
    const t = m.items[0] as ToolItem;
    assert.equal(t.toolKind, 'other');
    assert.equal(t.status, 'pending');
  });

  it('replaces the plan and tracks usage', () => {
    const m = model(
      upd({ sessionUpdate: 'plan', entries: [{ content: 'a', status: 'pending', priority: 'high' }] }),
      upd({ sessionUpdate: 'plan', entries: [{ content: 'a', status: 'completed', priority: 'high' }, { content: 'b', status: 'in_progress', priority: 'low' }] }),
      upd({ sessionUpdate: 'usage_update', used: 32000, size: 128000 }),
    );
    assert.equal(m.plan.length, 2);
    assert.equal(m.plan[0]!.status, 'completed');
    assert.deepEqual(m.usage, { used: 32000, size: 128000 });
    assert.equal(usagePercent(m.usage), 25);
  });

  it('updates a compaction notice by id', () => {
    const m = model(
      upd({ sessionUpdate: 'compaction_update', compactionId: 'c1', status: 'in_progress' }),
      upd({ sessionUpdate: 'compaction_update', compactionId: 'c1', status: 'completed', summary: 'Goal: x' }),
    );
    assert.equal(m.items.length, 1);
    assert.deepEqual([m.items[0]!.kind, (m.items[0] as { status: string }).status, (m.items[0] as { summary: string }).summary], ['compaction', 'completed', 'Goal: x']);
  });

  it('rebuilds replayed sessions from user and agent chunks', () => {
    const m = new ChatModel();
    m.apply({ type: 'reset', sessionId: 's1', replaying: true });
    for (const u of [
      { sessionUpdate: 'user_message_chunk', content: text('fix ') },
      { sessionUpdate: 'user_message_chunk', content: text('the bug') },
      { sessionUpdate: 'agent_message_chunk', content: text('Done.') },
      { sessionUpdate: 'user_message_chunk', content: text('thanks') },
      { sessionUpdate: 'agent_message_chunk', content: text('Any time.') },
    ] as SessionUpdate[])
      m.apply(upd(u));
    assert.deepEqual(
      m.items.map((i) => `${i.kind}:${'text' in i ? i.text : ''}`),
      ['user:fix the bug', 'agent:Done.', 'user:thanks', 'agent:Any time.'],
    );
  });

  it('does not duplicate a live echo of the prompt', () => {
    const m = model({ type: 'userMessage', text: 'hello there' }, upd({ sessionUpdate: 'user_message_chunk', content: text('hello there') }));
    assert.equal(m.items.length, 1);
  });

  it('shows failures from the turn result clearly', () => {
    const m = model(
      { type: 'userMessage', text: 'go' },
      { type: 'turnResult', result: { finalResponse: null, completed: false, failed: true, error: { category: 'auth', message: 'Invalid API key for model x' } } },
    );
    const n = m.items[m.items.length - 1]!;
    assert.equal(n.kind, 'notice');
    assert.equal((n as { level: string }).level, 'error');
    assert.match((n as { text: string }).text, /auth/);
    assert.equal((n as { detail: string }).detail, 'Invalid API key for model x');
  });

  it('adds the final response when nothing streamed, and notes interrupts and pending steers', () => {
    const m = model(
      { type: 'userMessage', text: 'go' },
      { type: 'turnResult', result: { finalResponse: 'All done', completed: false, interrupted: true, pendingSteer: 'also x' } },
    );
    assert.deepEqual(
      m.items.map((i) => i.kind),
      ['user', 'agent', 'notice', 'notice'],
    );
    assert.equal((m.items[1] as AgentItem).text, 'All done');
  });

  it('ends a turn with what it really did: info when edits landed, a warning when one did not', () => {
    const done = model(
      { type: 'userMessage', text: 'go' },
      { type: 'turnResult', result: { finalResponse: 'Changed it', completed: true, outcome: { summary: 'changed: greet.py +1 \u22121', editsFailed: false } } },
    );
    const ok = done.items[done.items.length - 1] as { kind: string; level: string; text: string };
    assert.equal(ok.kind, 'notice');
    assert.equal(ok.level, 'info');
    assert.equal(ok.text, 'changed: greet.py +1 \u22121');
    const failed = model(
      { type: 'userMessage', text: 'go' },
      { type: 'turnResult', result: { finalResponse: 'Changed it', completed: true, outcome: { summary: 'no files changed; 1 tool call failed; edit not made: greet.py', editsFailed: true } } },
    );
    const bad = failed.items[failed.items.length - 1] as { level: string; text: string };
    assert.equal(bad.level, 'warning');
    assert.match(bad.text, /edit not made: greet\.py/);
    const quiet = model(
      { type: 'userMessage', text: 'what is this?' },
      { type: 'turnResult', result: { finalResponse: 'A project', completed: true, outcome: { summary: null } } },
    );
    assert.deepEqual(quiet.items.map((i) => i.kind), ['user', 'agent']);
  });

  it('does not repeat the final response when it streamed', () => {
    const m = model(
      { type: 'userMessage', text: 'go' },
      upd({ sessionUpdate: 'agent_message_chunk', content: text('All done') }),
      { type: 'turnResult', result: { finalResponse: 'All done', completed: true } },
    );
    assert.equal(m.items.length, 2);
  });

  it('tracks permission cards and their resolution', () => {
    const m = model({
      type: 'permissionRequest',
      requestId: 'p1',
      toolCall: { toolCallId: 't1', title: 'Run tests' },
      options: [{ optionId: 'a', name: 'Allow', kind: 'allow_once' }],
    });
    assert.equal(m.pendingPermissions.length, 1);
    m.apply({ type: 'permissionResolved', requestId: 'p1', optionId: 'a' });
    assert.equal(m.pendingPermissions.length, 0);
    assert.equal((m.items[0] as { chosen: string }).chosen, 'a');
  });

  it('reset clears everything and marks the view dirty', () => {
    const m = model(upd({ sessionUpdate: 'agent_message_chunk', content: text('x') }), upd({ sessionUpdate: 'usage_update', used: 1, size: 2 }));
    m.takeDirty();
    m.apply({ type: 'reset', sessionId: 's2', title: 'Other' });
    assert.equal(m.items.length, 0);
    assert.equal(m.usage, null);
    assert.equal(m.title, 'Other');
    assert.equal(m.takeDirty().reset, true);
  });

  it('adopts a session created by the first prompt without clearing the view', () => {
    const m = new ChatModel();
    m.apply({ type: 'reset', sessionId: null });
    m.apply({ type: 'notice', level: 'info', text: 'hello' });
    m.apply({ type: 'session', sessionId: 'S9' });
    assert.equal(m.sessionId, 'S9');
    assert.equal(m.items.length, 1);
  });

  it('pages the session list', () => {
    const m = model({ type: 'sessions', sessions: [{ sessionId: 'a' }], nextCursor: 'c1' });
    assert.equal(m.sessionsCursor, 'c1');
    m.apply({ type: 'sessions', sessions: [{ sessionId: 'b' }], nextCursor: null, append: true });
    assert.deepEqual(m.sessions!.map((s) => s.sessionId), ['a', 'b']);
    assert.equal(m.sessionsCursor, null);
  });

  it('takes the title from session_info_update', () => {
    const m = model(upd({ sessionUpdate: 'session_info_update', title: 'Fix parser' }));
    assert.equal(m.title, 'Fix parser');
  });

  it('keeps the MCP servers of session_info_update and clears them on reset', () => {
    const m = model(
      upd({
        sessionUpdate: 'session_info_update',
        _meta: { agentls: { mcpServers: [
          { name: 'time', state: 'ready', toolCount: 2, lastError: null },
          { name: 'lab', state: 'failed', toolCount: 0, lastError: 'could not start: not found' },
          { name: 42 },
        ] } },
      } as unknown as SessionUpdate),
    );
    assert.deepEqual(m.mcp.map((s) => [s.name, s.state, s.toolCount]), [['time', 'ready', 2], ['lab', 'failed', 0]]);
    assert.equal(m.mcp[1].lastError, 'could not start: not found');
    assert.equal(m.title, null); // a status update is not a title change
    assert.ok(m.takeDirty().mcp);
    m.apply(upd({ sessionUpdate: 'session_info_update', title: 'T' }));
    assert.equal(m.mcp.length, 2); // an update without the list keeps it
    m.apply({ type: 'reset', sessionId: 's2' });
    assert.deepEqual(m.mcp, []);
  });

  it('shows live terminal output on the running command card before the server names the terminal', () => {
    const m = model(
      upd({ sessionUpdate: 'tool_call', toolCallId: 'old', title: 'ls', kind: 'execute', status: 'completed' }),
      upd({ sessionUpdate: 'tool_call', toolCallId: 'run', title: 'pytest', kind: 'execute', status: 'in_progress' }),
      { type: 'terminalOutput', terminalId: 'term-7', output: '..' },
    );
    assert.deepEqual(m.toolItem('run')!.content, [{ type: 'terminal', terminalId: 'term-7' }]);
    assert.deepEqual(m.toolItem('old')!.content, []);
    // The server's own content replaces the guess.
    m.apply(upd({ sessionUpdate: 'tool_call_update', toolCallId: 'run', status: 'completed', content: [{ type: 'terminal', terminalId: 'term-7' }] }));
    assert.equal(m.toolItem('run')!.content.length, 1);
    // Output for a terminal no running command owns is kept but attached nowhere.
    m.apply({ type: 'terminalOutput', terminalId: 'term-8', output: 'x' });
    assert.equal(m.toolItem('run')!.content.length, 1);
  });

  it('formats numbers and times', () => {
    assert.equal(formatTokens(950), '950');
    assert.equal(formatTokens(15400), '15.4k');
    assert.equal(formatTokens(128000), '128k');
    assert.equal(formatTokens(2_000_000), '2.0M');
    const now = Date.parse('2026-01-01T12:00:00Z');
    assert.equal(relativeTime('2026-01-01T11:59:50Z', now), 'just now');
    assert.equal(relativeTime('2026-01-01T11:30:00Z', now), '30 min ago');
    assert.equal(relativeTime('2026-01-01T06:00:00Z', now), '6 h ago');
    assert.equal(relativeTime('bad', now), '');
    assert.equal(usagePercent({ used: 5, size: 0 }), null);
  });
});
