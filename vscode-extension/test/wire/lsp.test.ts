/**
 * Wire test: the real `agentls lsp` server, driven from Node with
 * vscode-jsonrpc exactly as the extension's language client would, against
 * the real scripted provider (`python -m agentls.agent.scripted`).
 *
 * Skips (with the reason) when the Python side is not importable. The python
 * comes from $AGENTLS_PYTHON, default ../.venv/bin/python.
 */

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CancellationTokenSource } from 'vscode-jsonrpc/node';
import { Methods, type AgentUpdateParams, type TurnResult } from '../../src/acp';
import { ChatController } from '../../src/core/controller';
import type { ToWebview } from '../../src/protocol';
import { ChatModel, relativeTime, type AgentItem, type ToolItem } from '../../src/webview/state';
import { agentlsUnavailable, sleep, startAgentls, type AgentlsRig } from './agentls';

/** The model calls of turns (not the session-title requests that follow a first turn). */
function turnRequests<T extends { headers?: Record<string, string> }>(requests: T[]): T[] {
  return requests.filter((r) => (r.headers?.['x-agentls-purpose'] ?? 'turn') === 'turn');
}

describe('wire: agentls lsp + scripted provider (vscode-jsonrpc)', function () {
  this.timeout(90_000);
  let rig: AgentlsRig;

  function updatesFor(sessionId: string): AgentUpdateParams['update'][] {
    return rig.updates.filter((u) => u.sessionId === sessionId).map((u) => u.update);
  }

  /** The session's updates through the webview reducer, as the panel would show them. */
  function viewOf(sessionId: string): ChatModel {
    const m = new ChatModel();
    m.apply({ type: 'reset', sessionId });
    for (const u of updatesFor(sessionId)) m.apply({ type: 'update', sessionId, update: u });
    return m;
  }

  before(async function () {
    const why = agentlsUnavailable();
    if (why) {
      console.log(`    [skip] wire tests: ${why}.`);
      this.skip();
    }
    rig = await startAgentls({
      'README.md': '# Demo\n\nA tiny demo project.\n',
      'app.py': 'def greet(name):\n    return "hello " + name\n',
    });
  });

  after(async () => {
    await rig?.close();
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && rig) console.log(`--- server stderr (tail) ---\n${rig.stderr().slice(-4000)}`);
    await rig?.clear();
  });

  it('runs a turn and streams the answer as agent_message_chunk updates', async () => {
    const sessionId = await rig.newSession();
    await rig.push([{ content: 'Hello from the scripted model, over LSP.' }]);
    const r = await rig.conn.sendRequest<TurnResult>(Methods.turn, { sessionId, prompt: 'Say hello' });
    assert.equal(r.failed, false, JSON.stringify(r.error));
    assert.equal(r.completed, true);
    assert.equal(r.finalResponse, 'Hello from the scripted model, over LSP.');
    assert.equal(r.exitReason, 'text_response');
    const view = viewOf(sessionId);
    const agent = view.items.filter((i): i is AgentItem => i.kind === 'agent');
    assert.equal(agent.length, 1, 'chunks form one message');
    assert.equal(agent[0]!.text, 'Hello from the scripted model, over LSP.');
  });

  it('accepts a prompt of ContentBlock[] with a resource block', async () => {
    const sessionId = await rig.newSession();
    await rig.push([{ content: 'It greets.' }]);
    const r = await rig.conn.sendRequest<TurnResult>(Methods.turn, {
      sessionId,
      prompt: [
        { type: 'text', text: 'What does this do?\n\nSelection: app.py lines 1–2.' },
        { type: 'resource', resource: { uri: pathToFileURL(path.join(rig.workspace, 'app.py')).href, text: 'def greet(name):\n', mimeType: 'text/x-python' } },
      ],
    });
    assert.equal(r.finalResponse, 'It greets.');
    const reqs = await rig.requests();
    const last = reqs[reqs.length - 1]!;
    assert.match(JSON.stringify(last.body.messages), /def greet\(name\)/, 'the resource text reaches the model');
  });

  it('edits go out as workspace/applyEdit; applied: true lands the change', async () => {
    const sessionId = await rig.newSession();
    const before = rig.applyEdits.length;
    await rig.push([
      { tool_calls: [{ name: 'write_file', arguments: { path: 'notes/hello.txt', content: 'hi there\n' } }] },
      { tool_calls: [{ name: 'read_file', arguments: { path: 'app.py' } }] },  // an edit needs a read first
      { tool_calls: [{ name: 'edit_file', arguments: { path: 'app.py', old_string: '"hello " + name', new_string: 'f"hello {name}"' } }] },
      { content: 'Created notes/hello.txt and modernised app.py.' },
    ]);
    const r = await rig.conn.sendRequest<TurnResult>(Methods.turn, { sessionId, prompt: 'Create the notes file and tidy app.py' });
    assert.equal(r.failed, false, JSON.stringify(r.error));
    assert.equal(r.finalResponse, 'Created notes/hello.txt and modernised app.py.');
    assert.ok(rig.applyEdits.length >= before + 2, `expected applyEdit requests, got ${rig.applyEdits.length - before}`);
    assert.equal(fs.readFileSync(path.join(rig.workspace, 'notes', 'hello.txt'), 'utf8'), 'hi there\n');
    assert.equal(fs.readFileSync(path.join(rig.workspace, 'app.py'), 'utf8'), 'def greet(name):\n    return f"hello {name}"\n');
    const tools = viewOf(sessionId).items.filter((i): i is ToolItem => i.kind === 'tool');
    const edit = tools.find((t) => t.content.some((c) => c.type === 'diff' && c.path.endsWith('app.py')));
    assert.ok(edit, `a tool card with the app.py diff: ${JSON.stringify(tools.map((t) => [t.title, t.toolKind, t.status]))}`);
    assert.equal(edit.status, 'completed');
    const diff = edit.content.find((c) => c.type === 'diff')!;
    assert.ok(diff.type === 'diff' && diff.newText.includes('f"hello {name}"'));
  });

  it('runs terminal commands through agent/terminal/* on the client', async () => {
    const sessionId = await rig.newSession();
    const before = rig.terminalCreates.length;
    await rig.push([{ tool_calls: [{ name: 'terminal', arguments: { command: 'echo wire-terminal-ok' } }] }, { content: 'The command printed wire-terminal-ok.' }]);
    const r = await rig.conn.sendRequest<TurnResult>(Methods.turn, { sessionId, prompt: 'Run the echo' });
    assert.equal(r.failed, false, JSON.stringify(r.error));
    assert.equal(rig.terminalCreates.length, before + 1, 'the server used the client terminal');
    const toolMsgs = (await rig.requests()).flatMap((q) => q.body.messages.filter((m) => m.role === 'tool'));
    assert.ok(toolMsgs.some((m) => JSON.stringify(m.content).includes('wire-terminal-ok')), 'the output went back to the model');
  });

  it('$/cancelRequest on a turn answers -32800', async () => {
    const sessionId = await rig.newSession();
    await rig.push([{ content: 'too slow', latency: 30 }]);
    const source = new CancellationTokenSource();
    const turn = rig.conn.sendRequest<TurnResult>(Methods.turn, { sessionId, prompt: 'Take your time' }, source.token);
    await sleep(700);
    source.cancel();
    await assert.rejects(turn, (e: { code?: number }) => e.code === -32800);
    // The server is still healthy: the next turn works.
    await rig.push([{ content: 'back' }]);
    const r = await rig.conn.sendRequest<TurnResult>(Methods.turn, { sessionId, prompt: 'again' });
    assert.equal(r.finalResponse, 'back');
  });

  it('agent/interrupt stops a running turn (the Stop button)', async () => {
    const sessionId = await rig.newSession();
    await rig.push([{ content: 'never arrives', latency: 30 }]);
    const started = Date.now();
    const turn = rig.conn.sendRequest<TurnResult>(Methods.turn, { sessionId, prompt: 'Wait' });
    await sleep(500);
    const i = await rig.conn.sendRequest<{ interrupted: boolean }>(Methods.interrupt, { sessionId });
    assert.equal(i.interrupted, true);
    const r = await turn;
    assert.equal(r.interrupted, true);
    assert.ok(Date.now() - started < 10_000, 'stopped promptly');
  });

  it('the panel controller drives a real session: turn, list, load replays the transcript', async () => {
    const posted: ToWebview[] = [];
    const controller = new ChatController({
      connection: async () => ({ request: <R>(m: string, p: unknown) => rig.conn.sendRequest<R>(m, p) }),
      cwd: () => rig.workspace,
      askPermissionModal: async (p) => p.options[0]?.optionId ?? null,
    });
    controller.attachView({ post: (m) => posted.push(m), isVisible: () => true });
    const forward = rig.conn.onNotification(Methods.update, (p: AgentUpdateParams) => controller.onUpdate(p));
    try {
      await rig.push([{ content: 'Panel answer one.' }]);
      await controller.handleMessage({ type: 'prompt', text: 'First question from the panel' });
      const sessionId = controller.currentSessionId!;
      assert.ok(sessionId);

      posted.length = 0;
      await controller.handleMessage({ type: 'listSessions' });
      const list = posted.find((m): m is Extract<ToWebview, { type: 'sessions' }> => m.type === 'sessions');
      const listed = list?.sessions.find((s) => s.sessionId === sessionId);
      assert.ok(listed, 'the session is listed');
      assert.match(relativeTime(listed.updatedAt), /just now|min ago/, `updatedAt ${listed.updatedAt} is a time the picker can show`);

      await controller.handleMessage({ type: 'newSession' });
      assert.notEqual(controller.currentSessionId, sessionId);
      posted.length = 0;
      await controller.handleMessage({ type: 'loadSession', sessionId });
      const view = new ChatModel();
      for (const m of posted) view.apply(m);
      const shown = view.items.filter((i) => i.kind === 'user' || i.kind === 'agent').map((i) => `${i.kind}:${'text' in i ? i.text : ''}`);
      assert.deepEqual(shown, ['user:First question from the panel', 'agent:Panel answer one.']);
    } finally {
      forward.dispose();
    }
  });
  it('an edit that breaks the syntax shows the model the error in the same round (agent/diagnostics)', async () => {
    const sessionId = await rig.newSession();
    const before = rig.diagnosticsRequests.length;
    fs.writeFileSync(path.join(rig.workspace, 'calc.py'), 'def add(a, b):\n    return a + b\n');
    await rig.push([
      { tool_calls: [{ name: 'read_file', arguments: { path: 'calc.py' } }] },
      { tool_calls: [{ name: 'edit_file', arguments: { path: 'calc.py', old_string: 'def add(a, b):', new_string: 'def add(a, b:' } }] },
      { content: 'I left a parenthesis open; fixing it next.' },
    ]);
    const r = await rig.conn.sendRequest<TurnResult>(Methods.turn, { sessionId, prompt: 'Change add' });
    assert.equal(r.completed, true, JSON.stringify(r));
    const requests = turnRequests(await rig.requests());
    const toolTexts = requests.at(-1)!.body.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
    const edit = toolTexts.at(-1)!;
    assert.match(edit, /^Edited calc\.py \(\+1 -1 lines\)\n--- a\/calc\.py[\s\S]*\n\nNew problems in calc\.py after this edit \(1 error\):\n {2}calc\.py:1:8: error: '\(' was never closed \[bracket-lint\]$/);
    const asked = rig.diagnosticsRequests.slice(before) as { uris: string[]; settleMs: number }[];
    assert.deepEqual(asked.map((a) => a.settleMs), [0, 1500], 'asked before the edit, then settled after it');
  });

  it('a selection sent as context reaches the model', async () => {
    const sessionId = await rig.newSession();
    await rig.push([{ content: 'It greets.' }]);
    const file = path.join(rig.workspace, 'app.py');
    const controller = new ChatController({
      connection: async () => ({ request: <R>(m: string, p: unknown) => rig.conn.sendRequest<R>(m, p) }),
      cwd: () => rig.workspace,
      askPermissionModal: async () => null,
      editorContext: () => ({
        activeFile: { path: file, languageId: 'python', cursor: { line: 1, character: 4 } },
        selection: { path: file, languageId: 'python', text: "    return \"hello \" + name\n", range: { start: { line: 1, character: 0 }, end: { line: 2, character: 0 } } },
      }),
    });
    await controller.newSession();
    await controller.handleMessage({ type: 'prompt', text: 'What does this line do?', context: true });
    const requests = turnRequests(await rig.requests());
    const user = requests.at(-1)!.body.messages.filter((m) => m.role === 'user').map((m) => String(m.content)).at(-1)!;
    assert.match(user, /^What does this line do\?\n\n<editor_context>\n/);
    assert.ok(user.includes("The user's active file in the editor: app.py (python), cursor at line 2, column 5."), user);
    assert.ok(user.includes("The user's selection in app.py, line 2"), user);
    assert.ok(user.includes('    return "hello " + name'), user);
    void sessionId;
  });
});
