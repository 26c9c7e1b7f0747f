/**
 * Smoke test of the extension host code: activate() with a stand-in `vscode`
 * module, the real vscode-languageclient, and a tiny fake server process.
 * Checks the contributions are wired, the client sends initializationOptions
 * and the experimental.agent capability, and a prompt from the webview runs a
 * turn with a permission card and a client-side terminal.
 */

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { fakeWebviewView, installVscode, makeFakeVscode, Uri, type FakeVscode } from './fakeVscode';

const ROOT = path.resolve(__dirname, '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  contributes: { commands: { command: string }[]; views: Record<string, { id: string }[]>; chatParticipants: { id: string }[] };
  main: string;
};

async function until<T>(what: string, fn: () => T | undefined | false | null, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('extension activation (stand-in vscode, real language client)', function () {
  this.timeout(30_000);
  let fake: FakeVscode;
  let uninstall: () => void;
  let ext: typeof import('../../src/extension');
  let context: { subscriptions: { dispose(): unknown }[]; extensionUri: unknown };
  let logFile: string;
  let ws: string;

  const records = (): { method: string; params?: any; result?: any; [k: string]: any }[] =>
    fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];

  before(() => {
    ws = fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-activate-'));
    logFile = path.join(ws, 'server.log');
    process.env.FAKE_SERVER_LOG = logFile;
    fake = makeFakeVscode(ws);
    Object.assign(fake.settings, {
      'agentls.server.path': process.execPath,
      'agentls.server.args': [path.join(ROOT, 'test', 'fixtures', 'fake-agent-server.js')],
      'agentls.model': 'fake-model',
      'agentls.approval': 'ask',
    });
    uninstall = installVscode(fake.module);
    ext = require('../../src/extension') as typeof import('../../src/extension');
    context = { subscriptions: [], extensionUri: Uri.file(ROOT) };
    ext.activate(context as never);
  });

  after(async () => {
    for (const d of context?.subscriptions ?? []) {
      try {
        await d.dispose();
      } catch {
        /* ignore */
      }
    }
    await new Promise((r) => setTimeout(r, 200));
    uninstall?.();
    delete process.env.FAKE_SERVER_LOG;
    fs.rmSync(ws, { recursive: true, force: true });
  });

  it('registers every contributed command, the chat view and the participant', () => {
    const contributed = pkg.contributes.commands.map((c) => c.command).sort();
    assert.deepEqual([...fake.commands.keys()].filter((k) => k.startsWith('agentls.')).sort(), contributed);
    const viewId = pkg.contributes.views.agentls![0]!.id;
    const view = fake.viewProviders.get(viewId);
    assert.ok(view, `view provider for ${viewId}`);
    assert.deepEqual(view.options, { webviewOptions: { retainContextWhenHidden: true } });
    assert.deepEqual(fake.participants, pkg.contributes.chatParticipants.map((p) => p.id));
    assert.equal(pkg.main, './dist/extension.js');
  });

  it('starts the server with initializationOptions and the experimental.agent capability', async () => {
    const init = await until('initialize', () => records().find((r) => r.method === 'initialize'));
    assert.deepEqual(init.params.initializationOptions, { model: 'fake-model', approval: 'ask' });
    assert.deepEqual(init.params.capabilities.experimental.agent, { terminal: true, permissions: true, updates: true, diagnostics: true });
    assert.ok(init.params.capabilities.workspace.applyEdit, 'the language client handles workspace/applyEdit');
    await until('initialized', () => records().some((r) => r.method === 'initialized'));
  });

  it('serves the webview with a CSP nonce and runs a turn from it', async () => {
    const view = fakeWebviewView();
    fake.viewProviders.get('agentls.chat')!.provider.resolveWebviewView(view);
    const html = view.webview.html;
    const nonce = /nonce="([^"]+)"/.exec(html)?.[1];
    assert.ok(nonce && html.includes(`script-src 'nonce-${nonce}'`));
    assert.match(html, /src="vscode-webview:\/\/[^"]*dist\/webview\.js"/);
    assert.deepEqual((view.webview.options as { enableScripts: boolean }).enableScripts, true);

    view.webview.receive({ type: 'ready' });
    await until('ready status', () => (view.webview.posted as { type: string; state?: string }[]).some((m) => m.type === 'status' && m.state === 'ready'));

    // An open, dirty buffer the agent's edit lands in: the extension saves it after applyEdit.
    const notes = { uri: Uri.file(path.join(ws, 'notes.txt')), isDirty: true, saved: 0, save: () => Promise.resolve(true) };
    notes.save = () => {
      notes.saved++;
      return Promise.resolve(true);
    };
    fake.documents.push(notes);

    // The edit's language server: it reports a problem 200 ms after the edit, so the extension's answer to
    // agent/diagnostics (which the fake server sends right after its edit) must wait for it.
    fake.afterEdit = () => {
      fake.changeDocument(notes.uri);
      setTimeout(() => {
        fake.publish(notes.uri, [
          { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 2 } }, severity: 0, message: 'unexpected token', source: 'fake-lint', code: { value: 'E1' } },
          { range: { start: { line: 1, character: 0 }, end: { line: 1, character: 1 } }, severity: 3, message: 'a hint' },
        ]);
      }, 200);
    };
    view.webview.receive({ type: 'prompt', text: 'run echo' });
    const card = await until('permission card', () =>
      (view.webview.posted as { type: string; requestId?: string }[]).find((m) => m.type === 'permissionRequest'),
    );
    view.webview.receive({ type: 'permission', requestId: card.requestId, optionId: 'allow' });
    const result = await until('turn result', () =>
      (view.webview.posted as { type: string; result?: { finalResponse: string } }[]).find((m) => m.type === 'turnResult'),
    );
    assert.equal(result.result!.finalResponse, 'Output: fake-ok');
    assert.deepEqual(records().find((r) => r.method === 'applyEdit-answer')!.result, { applied: true });
    assert.equal(fake.appliedEdits.length, 1, 'VS Code applied the edit');
    assert.equal(notes.saved, 1, 'the edited document was saved');
    const answered = records().find((r) => r.method === 'diagnostics-answer')!.result;
    assert.deepEqual(answered, {
      diagnostics: [
        {
          uri: pathToFileURL(path.join(ws, 'notes.txt')).href,
          diagnostics: [
            { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 2 } }, severity: 1, message: 'unexpected token', source: 'fake-lint', code: 'E1' },
            { range: { start: { line: 1, character: 0 }, end: { line: 1, character: 1 } }, severity: 4, message: 'a hint' },
          ],
        },
      ],
    });

    const posted = view.webview.posted as { type: string; update?: { sessionUpdate: string } }[];
    assert.deepEqual(
      posted.filter((m) => m.type === 'update').map((m) => m.update!.sessionUpdate),
      ['agent_message_chunk', 'agent_message_chunk', 'tool_call', 'tool_call_update', 'tool_call_update'],
    );
    assert.ok(posted.some((m) => m.type === 'terminalOutput'), 'terminal output reaches the panel');
    const turn = records().find((r) => r.method === 'agent/turn')!;
    assert.deepEqual(turn.params, { sessionId: 'fake-1', prompt: 'run echo' });
    assert.deepEqual(records().find((r) => r.method === 'agent/newSession')!.params, { cwd: ws });
    const term = records().find((r) => r.method === 'terminal')!;
    assert.deepEqual(term.exit, { exitCode: 0, signal: null });
    assert.equal(term.unknown.code, -32602, 'a released terminal id is invalid params');
    assert.equal(fake.terminals.length, 1, 'a VS Code terminal (Pseudoterminal) was created');
    assert.match((fake.terminals[0] as { name: string }).name, /^agentls: echo fake-ok$/);
  });

  it('sends the selection and the active file with a prompt when the toggle is on', async () => {
    const view = fakeWebviewView();
    fake.viewProviders.get('agentls.chat')!.provider.resolveWebviewView(view);
    view.webview.receive({ type: 'ready' });
    const file = Uri.file(path.join(ws, 'app.py'));
    const pos = (line: number, character: number) => ({ line, character });
    (fake.module.window as { activeTextEditor: unknown }).activeTextEditor = {
      document: { uri: file, languageId: 'python', getText: () => 'def add(a, b):\n    return a + b\n' },
      selection: { isEmpty: false, active: pos(2, 0), start: pos(0, 0), end: pos(2, 0) },
    };
    view.webview.receive({ type: 'prompt', text: 'what does this do?', context: true });
    await until('the context turn', () => records().some((r) => r.method === 'agent/turn' && r.params.context));
    const turn = records().find((r) => r.method === 'agent/turn' && r.params.context)!;
    assert.deepEqual(turn.params.context, {
      activeFile: { path: file.fsPath, languageId: 'python', cursor: pos(2, 0) },
      selection: { path: file.fsPath, languageId: 'python', text: 'def add(a, b):\n    return a + b\n', range: { start: pos(0, 0), end: pos(2, 0) } },
    });
    assert.equal(turn.params.prompt, 'what does this do?');
    const echo = (view.webview.posted as { type: string; text?: string; context?: string }[]).find((m) => m.type === 'userMessage' && m.text === 'what does this do?');
    assert.equal(echo?.context, 'app.py lines 1–2');
  });

  it('the Stop, Undo and Compact commands reach the controller', async () => {
    // No turn is running, so Stop is a no-op; Undo and Compact ask the server (the fake lacks them → error notices).
    await fake.commands.get('agentls.stop')!();
    await fake.commands.get('agentls.undo')!();
    assert.ok(fake.commands.has('agentls.compact'));
  });
});
