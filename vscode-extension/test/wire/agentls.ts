/**
 * Starts the real `agentls lsp` (python -m agentls.server lsp) and the scripted
 * provider (python -m agentls.agent.scripted), and connects to the server with
 * vscode-jsonrpc as the extension's language client would: it declares the
 * experimental.agent capability and answers workspace/applyEdit,
 * agent/requestPermission (allow once) and agent/terminal/* (with the
 * extension's own TerminalManager). Used by the wire test and by
 * scripts/record-fixture.ts.
 */

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import { Methods, type AgentUpdateParams, type RequestPermissionParams } from '../../src/acp';
import { DiagnosticsWatch, answerDiagnostics, type EditorDiagnostic } from '../../src/core/diagnostics';
import { outcomeFor } from '../../src/core/permissions';
import { agentClientCapability } from '../../src/core/settings';
import { TerminalManager } from '../../src/core/terminals';

export const EXT_ROOT = path.resolve(__dirname, '..', '..');
export const REPO = path.resolve(EXT_ROOT, '..');
export const PYTHON = process.env.AGENTLS_PYTHON ?? path.join(REPO, '.venv', 'bin', 'python');
const KEY_ENV = 'AGENTLS_WIRE_TEST_KEY';

export interface Urls {
  url: string;
  openai_url: string;
  anthropic_url: string;
}

/** A scripted provider reply (docs/scripted-provider.md). */
export interface Reply {
  content?: string;
  reasoning?: string;
  tool_calls?: { name: string; arguments: Record<string, unknown> }[];
  latency?: number;
}

/** Why the Python side cannot run, or null when it can. */
export function agentlsUnavailable(): string | null {
  if (!fs.existsSync(PYTHON)) return `no python at ${PYTHON} (set AGENTLS_PYTHON)`;
  // `agentls lsp` runs server.lsp.main (server/cli.py).
  const r = spawnSync(PYTHON, ['-c', 'from agentls.server.lsp import main; import agentls.agent.scripted'], {
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

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `promise`, or a rejection naming `what` after `ms`. */
export function within<T>(what: string, ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_r, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms))),
  ]);
}

/** `python -m agentls.agent.scripted --port 0 ...args` and the URLs it prints on its first line. */
export async function startScriptedProvider(env: NodeJS.ProcessEnv, args: string[] = []): Promise<{ child: ChildProcess; urls: Urls }> {
  const child = spawn(PYTHON, ['-m', 'agentls.agent.scripted', '--port', '0', ...args], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  try {
    const firstLine = await within(
      'the scripted provider to print its URLs',
      30_000,
      new Promise<string>((resolve, reject) => {
        const rl = createInterface({ input: child.stdout! });
        rl.once('line', (l) => resolve(l));
        child.once('exit', (code) => reject(new Error(`scripted provider exited (${code}): ${stderr.slice(-2000)}`)));
      }),
    );
    return { child, urls: JSON.parse(firstLine) as Urls };
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
}

export interface AgentlsRig {
  conn: MessageConnection;
  urls: Urls;
  workspace: string;
  updates: AgentUpdateParams[];
  applyEdits: unknown[];
  permissions: RequestPermissionParams[];
  terminalCreates: unknown[];
  terminals: TerminalManager;
  /** What the harness's linter reports per URI (the extension's getDiagnostics), and the requests seen. */
  diagnostics: Map<string, EditorDiagnostic[]>;
  diagnosticsRequests: unknown[];
  stderr(): string;
  /** Queue replies; `model` may be "purpose:summary" etc. for auxiliary calls. */
  push(replies: Reply[], model?: string): Promise<void>;
  clear(): Promise<void>;
  requests(): Promise<{ headers: Record<string, string>; body: { messages: { role: string; content: unknown }[] } }[]>;
  newSession(): Promise<string>;
  close(): Promise<void>;
}

export async function startAgentls(files: Record<string, string> = {}): Promise<AgentlsRig> {
  const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-wire-ws-')));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-wire-data-'));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(workspace, name)), { recursive: true });
    fs.writeFileSync(path.join(workspace, name), text);
  }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PYTHONPATH: REPO,
    PYTHONUNBUFFERED: '1',
    [KEY_ENV]: 'sk-wire-test',
    AGENTLS_DATA_DIR: dataDir,
    XDG_CONFIG_HOME: path.join(dataDir, 'config'),
    XDG_DATA_HOME: path.join(dataDir, 'data'),
  };
  const children: ChildProcess[] = [];
  const updates: AgentUpdateParams[] = [];
  const applyEdits: unknown[] = [];
  const permissions: RequestPermissionParams[] = [];
  const terminalCreates: unknown[] = [];
  const terminals = new TerminalManager();
  // The extension's own settling logic, fed by a language-server-free linter: 150 ms after each edit of a
  // .py file it reports unclosed brackets, as a language server publishes diagnostics a little later.
  const watch = new DiagnosticsWatch();
  const diagnostics = new Map<string, EditorDiagnostic[]>();
  const diagnosticsRequests: unknown[] = [];
  const edited = (uri: string): void => {
    watch.documentChanged(uri);
    if (!uri.endsWith('.py')) return;
    setTimeout(() => {
      diagnostics.set(uri, bracketLint(fs.readFileSync(fileURLToPath(uri), 'utf8')));
      watch.diagnosticsChanged([uri], () => 'python');
    }, 150);
  };
  let serverStderr = '';
  let conn: MessageConnection | undefined;

  const close = async (): Promise<void> => {
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
    for (const p of children) {
      if (p.exitCode === null && p.signalCode === null) {
        p.kill('SIGTERM');
        await Promise.race([new Promise((r) => p.once('exit', r)), sleep(3000)]);
        if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
      }
    }
    for (const d of [workspace, dataDir]) fs.rmSync(d, { recursive: true, force: true });
  };

  try {
    const { child: provider, urls } = await startScriptedProvider(env, ['--responder', 'demo']);
    children.push(provider);

    const server = spawn(PYTHON, ['-m', 'agentls.server', 'lsp'], { cwd: workspace, env, stdio: ['pipe', 'pipe', 'pipe'] });
    children.push(server);
    server.stderr!.on('data', (d: Buffer) => (serverStderr += d.toString()));
    const serverExit = new Promise<never>((_r, reject) =>
      server.once('exit', (code) => reject(new Error(`agentls lsp exited (${code}): ${serverStderr.slice(-3000)}`))),
    );
    serverExit.catch(() => undefined);
    const c = createMessageConnection(new StreamMessageReader(server.stdout!), new StreamMessageWriter(server.stdin!));
    conn = c;

    c.onNotification(Methods.update, (p: AgentUpdateParams) => void updates.push(p));
    c.onNotification(() => undefined); // window/logMessage, $/progress, …
    c.onRequest('workspace/applyEdit', (p: { edit: WorkspaceEditLike }) => {
      applyEdits.push(p);
      applyWorkspaceEdit(p.edit);
      for (const uri of editedUris(p.edit)) edited(uri);
      return { applied: true };
    });
    c.onRequest(Methods.diagnostics, (p: { uris: string[]; settleMs?: number }) => {
      diagnosticsRequests.push(p);
      return answerDiagnostics(p, watch, (uri) => diagnostics.get(uri) ?? [], (uri) => (uri.endsWith('.py') ? 'python' : undefined));
    });
    c.onRequest(Methods.requestPermission, (p: RequestPermissionParams) => {
      permissions.push(p);
      const allow = p.options.find((o) => o.kind === 'allow_once') ?? p.options[0];
      return outcomeFor(p.options, allow?.optionId);
    });
    c.onRequest(Methods.terminalCreate, (p: Parameters<TerminalManager['create']>[0]) => {
      terminalCreates.push(p);
      return terminals.create(p);
    });
    c.onRequest(Methods.terminalOutput, (p: { terminalId: string }) => terminals.output(p));
    c.onRequest(Methods.terminalWaitForExit, (p: { terminalId: string }) => terminals.waitForExit(p));
    c.onRequest(Methods.terminalKill, (p: { terminalId: string }) => terminals.kill(p));
    c.onRequest(Methods.terminalRelease, (p: { terminalId: string }) => terminals.release(p));
    c.onRequest('window/workDoneProgress/create', () => null);
    c.onRequest('client/registerCapability', () => null);
    c.onRequest('workspace/configuration', (p: { items: unknown[] }) => p.items.map(() => null));
    c.onRequest('window/showMessageRequest', (p: { actions?: { title: string }[] }) => p.actions?.[0] ?? null);
    c.listen();

    type InitResult = { capabilities: { experimental?: { agent?: { version?: number; methods?: string[] } } } };
    const init = await within(
      'the initialize response',
      30_000,
      Promise.race([
        serverExit,
        c.sendRequest<InitResult>('initialize', {
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
        }),
      ]),
    );
    const agentCaps = init.capabilities.experimental?.agent;
    if (agentCaps?.version !== 1 || !agentCaps.methods?.includes(Methods.turn)) {
      throw new Error(`unexpected experimental.agent server capability: ${JSON.stringify(agentCaps)}`);
    }
    await c.sendNotification('initialized', {});

    return {
      conn: c,
      urls,
      workspace,
      updates,
      applyEdits,
      permissions,
      terminalCreates,
      terminals,
      diagnostics,
      diagnosticsRequests,
      stderr: () => serverStderr,
      async push(replies, model) {
        const r = await fetch(`${urls.url}/_scripted/push`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(model ? { model, replies } : { replies }),
        });
        if (r.status !== 200) throw new Error(`push failed: ${r.status} ${await r.text()}`);
      },
      async clear() {
        await fetch(`${urls.url}/_scripted/clear`, { method: 'POST' });
      },
      async requests() {
        const r = (await (await fetch(`${urls.url}/_scripted/requests`)).json()) as {
          requests: { headers: Record<string, string>; body: { messages: { role: string; content: unknown }[] } }[];
        };
        return r.requests;
      },
      async newSession() {
        const r = await c.sendRequest<{ sessionId: string }>(Methods.newSession, { cwd: workspace });
        return r.sessionId;
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

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

function editedUris(edit: WorkspaceEditLike): string[] {
  const out = Object.keys(edit.changes ?? {});
  for (const c of edit.documentChanges ?? []) if ('textDocument' in c) out.push(c.textDocument.uri);
  return out;
}

/** A tiny linter: an unclosed or unmatched bracket is an error where it stands. */
export function bracketLint(text: string): EditorDiagnostic[] {
  const open: { ch: string; line: number; character: number }[] = [];
  const pairs: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  const lines = text.split('\n');
  for (let line = 0; line < lines.length; line++) {
    for (let character = 0; character < lines[line]!.length; character++) {
      const ch = lines[line]![character]!;
      if ('([{'.includes(ch)) open.push({ ch, line, character });
      else if (ch in pairs) {
        if (open.at(-1)?.ch === pairs[ch]) open.pop();
        else return [{ range: { start: { line, character }, end: { line, character: character + 1 } }, severity: 0, message: `unmatched '${ch}'`, source: 'bracket-lint' }];
      }
    }
  }
  return open.map((o) => ({
    range: { start: { line: o.line, character: o.character }, end: { line: o.line, character: o.character + 1 } },
    severity: 0,
    message: `'${o.ch}' was never closed`,
    source: 'bracket-lint',
  }));
}
