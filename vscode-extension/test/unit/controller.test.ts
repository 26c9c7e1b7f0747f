import assert from 'node:assert/strict';
import type { RequestPermissionParams, TurnResult } from '../../src/acp';
import { ChatController, transcriptToUpdates, turnStateOf, type AgentRequester, type ControllerHost } from '../../src/core/controller';
import type { ToWebview } from '../../src/protocol';

interface Call {
  method: string;
  params: Record<string, unknown>;
}

/** A fake server: records requests; each method answers from `answers` (a value or a function). */
class FakeServer implements AgentRequester {
  calls: Call[] = [];
  answers: Record<string, unknown> = {
    'agent/newSession': { sessionId: 'S1' },
  };
  async request<R>(method: string, params: unknown): Promise<R> {
    this.calls.push({ method, params: params as Record<string, unknown> });
    const a = this.answers[method];
    const v = typeof a === 'function' ? await (a as (p: unknown) => unknown)(params) : a;
    if (v instanceof Error) throw v;
    return v as R;
  }
  methods(): string[] {
    return this.calls.map((c) => c.method);
  }
}

function setup(overrides: Partial<ControllerHost> = {}) {
  const server = new FakeServer();
  const posted: ToWebview[] = [];
  let visible = true;
  const modal: RequestPermissionParams[] = [];
  const host: ControllerHost = {
    connection: async () => server,
    cwd: () => '/work/proj',
    askPermissionModal: async (p) => {
      modal.push(p);
      return p.options[0]?.optionId ?? null;
    },
    ...overrides,
  };
  const c = new ChatController(host);
  c.attachView({ post: (m) => posted.push(m), isVisible: () => visible });
  return { c, server, posted, modal, setVisible: (v: boolean) => (visible = v) };
}

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('chat controller', () => {
  it('creates a session on the first prompt and runs a turn', async () => {
    const { c, server, posted } = setup();
    server.answers['agent/turn'] = { finalResponse: 'ok', completed: true } satisfies TurnResult;
    await c.handleMessage({ type: 'prompt', text: 'hello' });
    assert.deepEqual(server.methods(), ['agent/newSession', 'agent/turn']);
    assert.deepEqual(server.calls[0]!.params, { cwd: '/work/proj' });
    assert.deepEqual(server.calls[1]!.params, { sessionId: 'S1', prompt: 'hello' });
    assert.deepEqual(
      posted.map((m) => m.type),
      ['session', 'userMessage', 'turnState', 'turnResult', 'turnState'],
    );
    assert.deepEqual(posted[0], { type: 'session', sessionId: 'S1' });
    assert.equal(c.running, false);
  });

  it('two quick prompts share one new session', async () => {
    const { c, server } = setup();
    server.answers['agent/turn'] = { finalResponse: 'ok', completed: true };
    await Promise.all([c.handleMessage({ type: 'prompt', text: 'a' }), c.handleMessage({ type: 'prompt', text: 'b' })]);
    assert.equal(server.methods().filter((m) => m === 'agent/newSession').length, 1);
  });

  it('shows turns the server starts itself as running (session_info_update turn state)', () => {
    const { c, posted } = setup();
    (c as unknown as { sessionId: string }).sessionId = 'S1';
    const turn = (state: string) => ({ sessionUpdate: 'session_info_update', _meta: { agentls: { turn: { state } } } });
    c.onUpdate({ sessionId: 'S1', update: turn('running') });
    assert.equal(c.running, true);
    assert.deepEqual(posted.find((m) => m.type === 'turnState'), { type: 'turnState', running: true });
    c.onUpdate({ sessionId: 'S1', update: turn('idle') });
    assert.equal(c.running, false);
    assert.equal(turnStateOf({ sessionUpdate: 'session_info_update', title: 'x' }), null);
  });

  it('forwards updates of its session only', () => {
    const { c, posted } = setup();
    (c as unknown as { sessionId: string }).sessionId = 'S1';
    c.onUpdate({ sessionId: 'S1', update: { sessionUpdate: 'plan', entries: [] } });
    c.onUpdate({ sessionId: 'OTHER', update: { sessionUpdate: 'plan', entries: [] } });
    assert.equal(posted.filter((m) => m.type === 'update').length, 1);
  });

  it('steers while a turn runs and stops it with agent/interrupt', async () => {
    const { c, server, posted } = setup();
    const turn = deferred<TurnResult>();
    server.answers['agent/turn'] = () => turn.promise;
    server.answers['agent/steer'] = { outcome: 'queued' };
    server.answers['agent/interrupt'] = () => {
      turn.resolve({ finalResponse: null, completed: false, interrupted: true });
      return { interrupted: true };
    };
    const running = c.handleMessage({ type: 'prompt', text: 'long task' });
    await tick();
    assert.equal(c.running, true);
    await c.handleMessage({ type: 'prompt', text: 'use pytest' }); // typed while running → steer
    await c.handleMessage({ type: 'steer', text: 'and be quick' });
    await c.handleMessage({ type: 'stop' });
    await running;
    assert.deepEqual(server.methods(), ['agent/newSession', 'agent/turn', 'agent/steer', 'agent/steer', 'agent/interrupt']);
    assert.deepEqual(server.calls[2]!.params, { sessionId: 'S1', text: 'use pytest' });
    assert.deepEqual(server.calls[4]!.params, { sessionId: 'S1' });
    const steerEcho = posted.filter((m) => m.type === 'userMessage' && m.context === 'steer');
    assert.equal(steerEcho.length, 2);
    assert.equal(c.running, false);
  });

  it('sends compact with focus, undo with turns: 1, and reports results', async () => {
    const { c, server, posted } = setup();
    server.answers['agent/turn'] = { finalResponse: 'x', completed: true };
    server.answers['agent/compress'] = { tokensBefore: 48200, tokensAfter: 9100, messagesBefore: 34, messagesAfter: 6 };
    server.answers['agent/undo'] = { restoredFiles: ['a.py', 'b.py'] };
    await c.handleMessage({ type: 'prompt', text: 'hi' });
    await c.handleMessage({ type: 'compact', focus: '  the parser ' });
    await c.handleMessage({ type: 'compact' });
    await c.handleMessage({ type: 'undo' });
    assert.deepEqual(server.calls.slice(2).map((x) => [x.method, x.params]), [
      ['agent/compress', { sessionId: 'S1', focus: 'the parser' }],
      ['agent/compress', { sessionId: 'S1' }],
      ['agent/undo', { sessionId: 'S1', turns: 1 }],
    ]);
    const notices = posted.filter((m): m is Extract<ToWebview, { type: 'notice' }> => m.type === 'notice');
    assert.match(notices[0]!.text, /48\.2k → 9\.1k tokens, 34 → 6 messages/);
    assert.match(notices[2]!.text, /restored 2 files/);
    assert.equal(notices[2]!.detail, 'a.py\nb.py');
  });

  it('says so when compact/undo run before any session exists', async () => {
    const { c, server, posted } = setup();
    await c.handleMessage({ type: 'compact' });
    await c.handleMessage({ type: 'undo' });
    assert.equal(server.calls.length, 0);
    assert.equal(posted.filter((m) => m.type === 'notice').length, 2);
  });

  it('shows request errors as error notices, and cancellation as a warning', async () => {
    const { c, server, posted } = setup();
    server.answers['agent/turn'] = Object.assign(new Error('Model gpt-x not found'), { code: -32603 });
    await c.handleMessage({ type: 'prompt', text: 'go' });
    server.answers['agent/turn'] = Object.assign(new Error('cancelled'), { code: -32800 });
    await c.handleMessage({ type: 'prompt', text: 'go' });
    const notices = posted.filter((m): m is Extract<ToWebview, { type: 'notice' }> => m.type === 'notice');
    assert.deepEqual(notices.map((n) => n.level), ['error', 'warning']);
    assert.equal(notices[0]!.detail, 'Model gpt-x not found');
  });

  it('reports a server that cannot start', async () => {
    const { c, posted } = setup({
      connection: async () => {
        throw new Error('spawn agentls ENOENT');
      },
    });
    await c.handleMessage({ type: 'prompt', text: 'go' });
    const n = posted.find((m) => m.type === 'notice') as Extract<ToWebview, { type: 'notice' }>;
    assert.equal(n.level, 'error');
    assert.match(n.detail!, /ENOENT/);
  });

  it('new session resets the view; list and load sessions', async () => {
    const { c, server, posted } = setup();
    server.answers['agent/listSessions'] = { sessions: [{ sessionId: 'A', title: 'Fix bug', cwd: '/w', updatedAt: '2026-01-01T00:00:00Z' }] };
    server.answers['agent/loadSession'] = (p: { sessionId: string }) => {
      c.onUpdate({ sessionId: p.sessionId, update: { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'old q' } } });
      c.onUpdate({ sessionId: p.sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'old a' } } });
      return { sessionId: p.sessionId, messages: [] };
    };
    await c.handleMessage({ type: 'newSession' });
    assert.equal(c.currentSessionId, 'S1');
    await c.handleMessage({ type: 'listSessions', query: 'bug' });
    assert.deepEqual(server.calls[1]!.params, { cwd: '/work/proj', query: 'bug' });
    await c.handleMessage({ type: 'listSessions', query: 'bug', cursor: 'CUR' });
    assert.deepEqual(server.calls[2]!.params, { cwd: '/work/proj', query: 'bug', cursor: 'CUR' });
    assert.equal((posted[posted.length - 1] as { append?: boolean }).append, true);
    await c.handleMessage({ type: 'loadSession', sessionId: 'A' });
    assert.equal(c.currentSessionId, 'A');
    const types = posted.map((m) => m.type);
    assert.deepEqual(types, ['reset', 'turnState', 'sessions', 'sessions', 'reset', 'turnState', 'update', 'update', 'turnState']);
    assert.deepEqual(posted[4], { type: 'reset', sessionId: 'A', title: null, replaying: true });
  });

  it('rebuilds from the returned transcript when the server did not replay', async () => {
    const { c, server, posted } = setup();
    server.answers['agent/loadSession'] = {
      sessionId: 'B',
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'q' },
        { role: 'assistant', content: null, tool_calls: [] },
        { role: 'tool', content: 'out' },
        { role: 'assistant', content: [{ type: 'text', text: 'a' }] },
      ],
    };
    await c.handleMessage({ type: 'loadSession', sessionId: 'B' });
    const updates = posted.filter((m): m is Extract<ToWebview, { type: 'update' }> => m.type === 'update').map((m) => m.update.sessionUpdate);
    assert.deepEqual(updates, ['user_message_chunk', 'agent_message_chunk']);
    assert.equal(transcriptToUpdates([null, 3, { role: 'user' }]).length, 0);
  });

  it('asks permission with an inline card and answers with the chosen option', async () => {
    const { c, server, posted } = setup();
    server.answers['agent/turn'] = { finalResponse: 'x', completed: true };
    await c.handleMessage({ type: 'prompt', text: 'hi' });
    const options = [
      { optionId: 'ok', name: 'Allow', kind: 'allow_once' as const },
      { optionId: 'no', name: 'Reject', kind: 'reject_once' as const },
    ];
    const answer = c.requestPermission({ sessionId: 'S1', toolCall: { toolCallId: 't1', title: 'Run ls' }, options });
    const card = posted.find((m) => m.type === 'permissionRequest') as Extract<ToWebview, { type: 'permissionRequest' }>;
    assert.ok(card);
    await c.handleMessage({ type: 'permission', requestId: card.requestId, optionId: 'no' });
    assert.deepEqual(await answer, { outcome: { outcome: 'selected', optionId: 'no' } });
    assert.deepEqual(posted[posted.length - 1], { type: 'permissionResolved', requestId: card.requestId, optionId: 'no' });
    assert.equal(c.pendingPermissionCount, 0);
  });

  it('cancels a pending card when the server cancels the request or the user stops', async () => {
    const { c } = setup();
    (c as unknown as { sessionId: string }).sessionId = 'S1';
    let cancel!: () => void;
    const token = { isCancellationRequested: false, onCancellationRequested: (f: () => void) => (cancel = f) };
    const options = [{ optionId: 'ok', name: 'Allow', kind: 'allow_once' as const }];
    const a = c.requestPermission({ sessionId: 'S1', toolCall: { toolCallId: 't' }, options }, token);
    cancel();
    assert.deepEqual(await a, { outcome: { outcome: 'cancelled' } });
    const b = c.requestPermission({ sessionId: 'S1', toolCall: { toolCallId: 't' }, options });
    await c.handleMessage({ type: 'stop' });
    assert.deepEqual(await b, { outcome: { outcome: 'cancelled' } });
  });

  it('falls back to the modal when the panel is hidden or shows another session', async () => {
    const { c, modal, setVisible } = setup();
    (c as unknown as { sessionId: string }).sessionId = 'S1';
    const options = [{ optionId: 'ok', name: 'Allow', kind: 'allow_once' as const }];
    setVisible(false);
    assert.deepEqual(await c.requestPermission({ sessionId: 'S1', toolCall: { toolCallId: 't' }, options }), {
      outcome: { outcome: 'selected', optionId: 'ok' },
    });
    setVisible(true);
    await c.requestPermission({ sessionId: 'PARTICIPANT', toolCall: { toolCallId: 't' }, options });
    assert.equal(modal.length, 2);
  });

  it('replays a compacted history to a re-created webview', async () => {
    const { c, server } = setup();
    server.answers['agent/turn'] = (p: { sessionId: string }) => {
      for (const t of ['Hel', 'lo ', 'world']) c.onUpdate({ sessionId: p.sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: t } } });
      return { finalResponse: 'Hello world', completed: true };
    };
    await c.handleMessage({ type: 'prompt', text: 'hi' });
    c.onTerminalOutput('term-1', 'out', { exitCode: 0, signal: null });
    const replay: ToWebview[] = [];
    c.attachView({ post: (m) => replay.push(m), isVisible: () => true });
    await c.handleMessage({ type: 'ready' });
    const chunks = replay.filter((m): m is Extract<ToWebview, { type: 'update' }> => m.type === 'update');
    assert.equal(chunks.length, 1);
    assert.deepEqual(chunks[0]!.update, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Hello world' } });
    assert.equal(replay[0]!.type, 'status');
    assert.equal(replay[1]!.type, 'reset');
    assert.ok(replay.some((m) => m.type === 'terminalOutput'));
    assert.deepEqual(replay[replay.length - 1], { type: 'turnState', running: false });
  });
});
