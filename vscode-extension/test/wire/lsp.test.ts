/**
 * Wire test: the real `agentls lsp` server, driven from Node with
 * vscode-jsonrpc exactly as the extension's language client would, against
 * the real scripted provider (`python -m agent.scripted`).
 *
 * Skips (with the reason) when the Python side is not importable. The python
 * comes from $AGENTLS_PYTHON, default ../.venv/bin/python.
 */

import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL, fileURLToPath } from 'node:url';
import {
  CancellationTokenSource,
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from 'vscode-jsonrpc/node';
import { Methods, type AgentUpdateParams, type RequestPermissionParams, type TurnResult } from '../../src/acp';
import { ChatController } from '../../src/core/controller';
import { outcomeFor } from '../../src/core/permissions';
import { agentClientCapability } from '../../src/core/settings';
import { TerminalManager } from '../../src/core/terminals';
import type { ToWebview } from '../../src/protocol';
import { ChatModel, type AgentItem, type ToolItem } from '../../src/webview/state';

const EXT_ROOT = path.resolve(__dirname, '..', '..');
const REPO = path.resolve(EXT_ROOT, '..');
const PYTHON = process.env.AGENTLS_PYTHON ?? path.join(REPO, '.venv', 'bin', 'python');
const KEY_ENV = 'AGENTLS_WIRE_TEST_KEY';

interface Urls {
  url: string;
  openai_url: string;
  anthropic_url: string;
}

interface Reply {
  content?: string;
  tool_calls?: { name: string; arguments: Record<string, unknown> }[];
  latency?: number;
}

/** Why the wire test cannot run, or null when it can. */
function unavailable(): string | null {
  if (!fs.existsSync(PYTHON)) return `no python at ${PYTHON} (set AGENTLS_PYTHON)`;
  // `agentls lsp` runs server.lsp.main (server/cli.py).
  const r = spawnSync(PYTHON, ['-c', 'from server.lsp import main; import agent.scripted'], {
    cwd: REPO,
    env: { ...process.env, PYTHONPATH: REPO },
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (r.status !== 0) {
    const why = (r.stderr || r.error?.message || '').trim().split('\n').pop();
    return `the agentls LSP face or the scripted provider is not importable yet (${why})`;
  }
  return null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `promise`, or a rejection naming `what` after `ms`. */
function within<T>(what: string, ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_r, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms))),
  ]);
}

describe('wire: agentls lsp + scripted provider (vscode-jsonrpc)', function () {
  this.timeout(90_000);

  let provider: ChildProcess | undefined;
  let server: ChildProcess | undefined;
  let conn: MessageConnection | undefined;
  let urls: Urls;
  let workspace: string;
  let dataDir: string;
  let serverStderr = '';

  const updates: AgentUpdateParams[] = [];
  const applyEdits: unknown[] = [];
  const permissions: RequestPermissionParams[] = [];
  const terminalCreates: unknown[] = [];
  const terminals = new TerminalManager();

  async function push(replies: Reply[]): Promise<void> {
    const r = await fetch(`${urls.url}/_scripted/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ replies }),
    });
    assert.equal(r.status, 200, await r.text());
  }

  async function clearProvider(): Promise<void> {
    await fetch(`${urls.url}/_scripted/clear`, { method: 'POST' });
  }

  async function newSession(): Promise<string> {
    const r = await conn!.sendRequest<{ sessionId: string }>(Methods.newSession, { cwd: workspace });
    assert.equal(typeof r.sessionId, 'string');
    return r.sessionId;
  }

  function updatesFor(sessionId: string): AgentUpdateParams['update'][] {
    return updates.filter((u) => u.sessionId === sessionId).map((u) => u.update);
  }

  /** The session's updates through the webview reducer, as the panel would show them. */
  function viewOf(sessionId: string): ChatModel {
    const m = new ChatModel();
    m.apply({ type: 'reset', sessionId });
    for (const u of updatesFor(sessionId)) m.apply({ type: 'update', sessionId, update: u });
    return m;
  }

  before(async function () {
    const why = unavailable();
    if (why) {
      console.log(`    [skip] wire tests: ${why}.`);
      this.skip();
    }
    workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-wire-ws-')));
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-wire-data-'));
    fs.writeFileSync(path.join(workspace, 'README.md'), '# Demo\n\nA tiny demo project.\n');
    fs.writeFileSync(path.join(workspace, 'app.py'), 'def greet(name):\n    return "hello " + name\n');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PYTHONPATH: REPO,
      PYTHONUNBUFFERED: '1',
      [KEY_ENV]: 'sk-wire-test',
      AGENTLS_DATA_DIR: dataDir,
      XDG_CONFIG_HOME: path.join(dataDir, 'config'),
      XDG_DATA_HOME: path.join(dataDir, 'data'),
    };

    provider = spawn(PYTHON, ['-m', 'agent.scripted', '--port', '0', '--responder', 'demo'], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let providerStderr = '';
    provider.stderr!.on('data', (d: Buffer) => (providerStderr += d.toString()));
    const firstLine = await within(
      'the scripted provider to print its URLs',
      20_000,
      new Promise<string>((resolve, reject) => {
        const rl = createInterface({ input: provider!.stdout! });
        rl.once('line', (l) => resolve(l));
        provider!.once('exit', (code) => reject(new Error(`scripted provider exited (${code}): ${providerStderr.slice(-2000)}`)));
      }),
    );
    urls = JSON.parse(firstLine) as Urls;

    server = spawn(PYTHON, ['-m', 'server', 'lsp'], { cwd: workspace, env, stdio: ['pipe', 'pipe', 'pipe'] });
    server.stderr!.on('data', (d: Buffer) => (serverStderr += d.toString()));
    const serverExit = new Promise<never>((_r, reject) =>
      server!.once('exit', (code) => reject(new Error(`agentls lsp exited (${code}): ${serverStderr.slice(-3000)}`))),
    );
    serverExit.catch(() => undefined);
    conn = createMessageConnection(new StreamMessageReader(server.stdout!), new StreamMessageWriter(server.stdin!));

    conn.onNotification(Methods.update, (p: AgentUpdateParams) => void updates.push(p));
    conn.onNotification(() => undefined); // window/logMessage, $/progress, …
    conn.onRequest('workspace/applyEdit', (p: { edit: WorkspaceEditLike }) => {
      applyEdits.push(p);
      applyWorkspaceEdit(p.edit);
      return { applied: true };
    });
    conn.onRequest(Methods.requestPermission, (p: RequestPermissionParams) => {
      permissions.push(p);
      const allow = p.options.find((o) => o.kind === 'allow_once') ?? p.options[0];
      return outcomeFor(p.options, allow?.optionId);
    });
    conn.onRequest(Methods.terminalCreate, (p: Parameters<TerminalManager['create']>[0]) => {
      terminalCreates.push(p);
      return terminals.create(p);
    });
    conn.onRequest(Methods.terminalOutput, (p: { terminalId: string }) => terminals.output(p));
    conn.onRequest(Methods.terminalWaitForExit, (p: { terminalId: string }) => terminals.waitForExit(p));
    conn.onRequest(Methods.terminalKill, (p: { terminalId: string }) => terminals.kill(p));
    conn.onRequest(Methods.terminalRelease, (p: { terminalId: string }) => terminals.release(p));
    conn.onRequest('window/workDoneProgress/create', () => null);
    conn.onRequest('client/registerCapability', () => null);
    conn.onRequest('workspace/configuration', (p: { items: unknown[] }) => p.items.map(() => null));
    conn.onRequest('window/showMessageRequest', (p: { actions?: { title: string }[] }) => p.actions?.[0] ?? null);
    conn.listen();

    type InitResult = { capabilities: { experimental?: { agent?: { version?: number; methods?: string[] } } } };
    const init = await within('the initialize response', 30_000, Promise.race([serverExit, conn.sendRequest<InitResult>('initialize', {
      processId: process.pid,
      clientInfo: { name: 'agentls-vscode-wire-test', version: '0.1.0' },
      rootUri: pathToFileURL(workspace).href,
      workspaceFolders: [{ uri: pathToFileURL(workspace).href, name: 'ws' }],
      capabilities: {
        workspace: { applyEdit: true, workspaceEdit: { documentChanges: true, resourceOperations: ['create', 'rename', 'delete'] } },
        window: { workDoneProgress: true },
        experimental: { agent: agentClientCapability() },
      },
      initializationOptions: { model: 'scripted-model', baseUrl: urls.openai_url, provider: 'openai', apiKeyEnv: KEY_ENV },
    })]));
    assert.equal(init.capabilities.experimental?.agent?.version, 1);
    assert.ok(init.capabilities.experimental?.agent?.methods?.includes(Methods.turn));
    await conn.sendNotification('initialized', {});
  });

  after(async () => {
    terminals.disposeAll();
    if (conn) {
      try {
        await Promise.race([conn.sendRequest('shutdown'), sleep(5000)]);
        await conn.sendNotification('exit');
      } catch {
        /* already gone */
      }
      conn.dispose();
    }
    for (const p of [server, provider]) {
      if (p && p.exitCode === null) {
        p.kill('SIGTERM');
        await Promise.race([new Promise((r) => p.once('exit', r)), sleep(3000)]);
        if (p.exitCode === null) p.kill('SIGKILL');
      }
    }
    for (const d of [workspace, dataDir]) if (d) fs.rmSync(d, { recursive: true, force: true });
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && serverStderr) console.log(`--- server stderr (tail) ---\n${serverStderr.slice(-4000)}`);
    if (urls) await clearProvider();
  });

  it('runs a turn and streams the answer as agent_message_chunk updates', async () => {
    const sessionId = await newSession();
    await push([{ content: 'Hello from the scripted model, over LSP.' }]);
    const r = await conn!.sendRequest<TurnResult>(Methods.turn, { sessionId, prompt: 'Say hello' });
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
    const sessionId = await newSession();
    await push([{ content: 'It greets.' }]);
    const r = await conn!.sendRequest<TurnResult>(Methods.turn, {
      sessionId,
      prompt: [
        { type: 'text', text: 'What does this do?\n\nSelection: app.py lines 1–2.' },
        { type: 'resource', resource: { uri: pathToFileURL(path.join(workspace, 'app.py')).href, text: 'def greet(name):\n', mimeType: 'text/x-python' } },
      ],
    });
    assert.equal(r.finalResponse, 'It greets.');
    const reqs = (await (await fetch(`${urls.url}/_scripted/requests`)).json()) as { requests: { last_user_text: string; body: { messages: unknown[] } }[] };
    const last = reqs.requests[reqs.requests.length - 1]!;
    assert.match(JSON.stringify(last.body.messages), /def greet\(name\)/, 'the resource text reaches the model');
  });

  it('edits go out as workspace/applyEdit; applied: true lands the change', async () => {
    const sessionId = await newSession();
    const before = applyEdits.length;
    await push([
      { tool_calls: [{ name: 'write_file', arguments: { path: 'notes/hello.txt', content: 'hi there\n' } }] },
      { tool_calls: [{ name: 'edit_file', arguments: { path: 'app.py', old_string: '"hello " + name', new_string: 'f"hello {name}"' } }] },
      { content: 'Created notes/hello.txt and modernised app.py.' },
    ]);
    const r = await conn!.sendRequest<TurnResult>(Methods.turn, { sessionId, prompt: 'Create the notes file and tidy app.py' });
    assert.equal(r.failed, false, JSON.stringify(r.error));
    assert.equal(r.finalResponse, 'Created notes/hello.txt and modernised app.py.');
    assert.ok(applyEdits.length >= before + 2, `expected applyEdit requests, got ${applyEdits.length - before}`);
    assert.equal(fs.readFileSync(path.join(workspace, 'notes', 'hello.txt'), 'utf8'), 'hi there\n');
    assert.equal(fs.readFileSync(path.join(workspace, 'app.py'), 'utf8'), 'def greet(name):\n    return f"hello {name}"\n');
    const tools = viewOf(sessionId).items.filter((i): i is ToolItem => i.kind === 'tool');
    const edit = tools.find((t) => t.content.some((c) => c.type === 'diff' && c.path.endsWith('app.py')));
    assert.ok(edit, `a tool card with the app.py diff: ${JSON.stringify(tools.map((t) => [t.title, t.toolKind, t.status]))}`);
    assert.equal(edit.status, 'completed');
    const diff = edit.content.find((c) => c.type === 'diff')!;
    assert.ok(diff.type === 'diff' && diff.newText.includes('f"hello {name}"'));
  });

  it('runs terminal commands through agent/terminal/* on the client', async () => {
    const sessionId = await newSession();
    const before = terminalCreates.length;
    await push([{ tool_calls: [{ name: 'terminal', arguments: { command: 'echo wire-terminal-ok' } }] }, { content: 'The command printed wire-terminal-ok.' }]);
    const r = await conn!.sendRequest<TurnResult>(Methods.turn, { sessionId, prompt: 'Run the echo' });
    assert.equal(r.failed, false, JSON.stringify(r.error));
    assert.equal(terminalCreates.length, before + 1, 'the server used the client terminal');
    const reqs = (await (await fetch(`${urls.url}/_scripted/requests`)).json()) as { requests: { body: { messages: { role: string; content: unknown }[] } }[] };
    const toolMsgs = reqs.requests.flatMap((q) => q.body.messages.filter((m) => m.role === 'tool'));
    assert.ok(toolMsgs.some((m) => JSON.stringify(m.content).includes('wire-terminal-ok')), 'the output went back to the model');
  });

  it('$/cancelRequest on a turn answers -32800', async () => {
    const sessionId = await newSession();
    await push([{ content: 'too slow', latency: 30 }]);
    const source = new CancellationTokenSource();
    const turn = conn!.sendRequest<TurnResult>(Methods.turn, { sessionId, prompt: 'Take your time' }, source.token);
    await sleep(700);
    source.cancel();
    await assert.rejects(turn, (e: { code?: number }) => e.code === -32800);
    // The server is still healthy: the next turn works.
    await push([{ content: 'back' }]);
    const r = await conn!.sendRequest<TurnResult>(Methods.turn, { sessionId, prompt: 'again' });
    assert.equal(r.finalResponse, 'back');
  });

  it('agent/interrupt stops a running turn (the Stop button)', async () => {
    const sessionId = await newSession();
    await push([{ content: 'never arrives', latency: 30 }]);
    const started = Date.now();
    const turn = conn!.sendRequest<TurnResult>(Methods.turn, { sessionId, prompt: 'Wait' });
    await sleep(500);
    const i = await conn!.sendRequest<{ interrupted: boolean }>(Methods.interrupt, { sessionId });
    assert.equal(i.interrupted, true);
    const r = await turn;
    assert.equal(r.interrupted, true);
    assert.ok(Date.now() - started < 10_000, 'stopped promptly');
  });

  it('the panel controller drives a real session: turn, list, load replays the transcript', async () => {
    const posted: ToWebview[] = [];
    const controller = new ChatController({
      connection: async () => ({ request: <R>(m: string, p: unknown) => conn!.sendRequest<R>(m, p) }),
      cwd: () => workspace,
      askPermissionModal: async (p) => p.options[0]?.optionId ?? null,
    });
    controller.attachView({ post: (m) => posted.push(m), isVisible: () => true });
    const forward = conn!.onNotification(Methods.update, (p: AgentUpdateParams) => controller.onUpdate(p));
    try {
      await push([{ content: 'Panel answer one.' }]);
      await controller.handleMessage({ type: 'prompt', text: 'First question from the panel' });
      const sessionId = controller.currentSessionId!;
      assert.ok(sessionId);

      posted.length = 0;
      await controller.handleMessage({ type: 'listSessions' });
      const list = posted.find((m): m is Extract<ToWebview, { type: 'sessions' }> => m.type === 'sessions');
      assert.ok(list?.sessions.some((s) => s.sessionId === sessionId), 'the session is listed');

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
});

// ---- a minimal workspace/applyEdit implementation for the test client ----

interface TextEditLike {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  newText: string;
}
interface WorkspaceEditLike {
  changes?: Record<string, TextEditLike[]>;
  documentChanges?: (
    | { textDocument: { uri: string }; edits: TextEditLike[] }
    | { kind: 'create'; uri: string; options?: { overwrite?: boolean; ignoreIfExists?: boolean } }
    | { kind: 'rename'; oldUri: string; newUri: string }
    | { kind: 'delete'; uri: string }
  )[];
}

function offsetAt(text: string, pos: { line: number; character: number }): number {
  let offset = 0;
  for (let line = 0; line < pos.line; line++) {
    const nl = text.indexOf('\n', offset);
    if (nl < 0) return text.length;
    offset = nl + 1;
  }
  return Math.min(offset + pos.character, text.length);
}

function applyTextEdits(file: string, edits: TextEditLike[]): void {
  let text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const sorted = [...edits].sort((a, b) => offsetAt(text, b.range.start) - offsetAt(text, a.range.start));
  for (const e of sorted) text = text.slice(0, offsetAt(text, e.range.start)) + e.newText + text.slice(offsetAt(text, e.range.end));
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

function applyWorkspaceEdit(edit: WorkspaceEditLike): void {
  for (const [uri, edits] of Object.entries(edit.changes ?? {})) applyTextEdits(fileURLToPath(uri), edits);
  for (const c of edit.documentChanges ?? []) {
    if ('textDocument' in c) applyTextEdits(fileURLToPath(c.textDocument.uri), c.edits);
    else if (c.kind === 'create') {
      const f = fileURLToPath(c.uri);
      fs.mkdirSync(path.dirname(f), { recursive: true });
      if (!fs.existsSync(f) || c.options?.overwrite) fs.writeFileSync(f, '');
    } else if (c.kind === 'rename') fs.renameSync(fileURLToPath(c.oldUri), fileURLToPath(c.newUri));
    else if (c.kind === 'delete') fs.rmSync(fileURLToPath(c.uri), { force: true, recursive: true });
  }
}
