/**
 * The chat panel's brain: turns webview messages into agent requests and
 * agent updates into webview messages. No `vscode` import — the extension
 * supplies the connection and a few host callbacks, the tests supply fakes.
 */

import {
  Methods,
  blocksText,
  type AgentUpdateParams,
  type CompressResult,
  type ContentBlock,
  type ListSessionsResult,
  type RequestPermissionParams,
  type RequestPermissionResult,
  type SessionUpdate,
  type SteerResult,
  type TurnResult,
  type UndoResult,
} from '../acp';
import type { ServerState, SlashCommand, ToExtension, ToWebview } from '../protocol';
import { promptWithMentions, type EditorContext, type Mention } from './context';
import { cancelledOutcome, outcomeFor } from './permissions';

export interface AgentRequester {
  request<R = unknown>(method: string, params: unknown): Promise<R>;
}

export interface ChatViewPort {
  post(msg: ToWebview): void;
  isVisible(): boolean;
}

export interface CancellationLike {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: () => void): unknown;
}

export interface ControllerHost {
  /** Resolves once the language client runs; rejects with a user-facing message. */
  connection(): Promise<AgentRequester>;
  /** The workspace folder, sent as `cwd`. */
  cwd(): string | undefined;
  /** Modal fallback for permissions: returns the chosen optionId or null. */
  askPermissionModal(params: RequestPermissionParams): Promise<string | null>;
  openLocation?(path: string, line?: number | null): void;
  openTerminal?(terminalId: string): void;
  /** Bring the chat panel into view (used by editor commands). */
  revealView?(): void;
  /** The running state of the panel's session changed (status bar). */
  onRunningChanged?(running: boolean): void;
  /** The active file and selection now (for a prompt sent with the context toggle on). */
  editorContext?(): EditorContext | undefined;
  /** Workspace files for an `@` mention being typed, best first. */
  findFiles?(query: string): Promise<Mention[]>;
}

interface PendingPermission {
  params: RequestPermissionParams;
  resolve: (r: RequestPermissionResult) => void;
}

/** How many webview messages are kept to rebuild a re-created webview. */
const HISTORY_LIMIT = 20_000;

function errorMessage(err: unknown): { message: string; code?: number } {
  if (err && typeof err === 'object') {
    const e = err as { message?: unknown; code?: unknown };
    return {
      message: typeof e.message === 'string' && e.message ? e.message : String(err),
      code: typeof e.code === 'number' ? e.code : undefined,
    };
  }
  return { message: String(err) };
}

const CHUNK_KINDS = new Set(['agent_message_chunk', 'agent_thought_chunk', 'user_message_chunk']);

/** Merge two consecutive text chunks of one message into one (history compaction). */
function mergeChunk(prev: ToWebview, next: ToWebview): ToWebview | null {
  if (prev.type !== 'update' || next.type !== 'update' || prev.sessionId !== next.sessionId) return null;
  const a = prev.update as { sessionUpdate: string; content?: ContentBlock; messageId?: string | null };
  const b = next.update as { sessionUpdate: string; content?: ContentBlock; messageId?: string | null };
  if (a.sessionUpdate !== b.sessionUpdate || !CHUNK_KINDS.has(a.sessionUpdate)) return null;
  if ((a.messageId ?? null) !== (b.messageId ?? null)) return null;
  if (a.content?.type !== 'text' || b.content?.type !== 'text') return null;
  const text = (a.content as { text: string }).text + (b.content as { text: string }).text;
  return { ...prev, update: { ...a, content: { type: 'text', text } } as SessionUpdate };
}

export class ChatController {
  private sessionId: string | null = null;
  private title: string | null = null;
  private view: ChatViewPort | undefined;
  private history: ToWebview[] = [];
  private readonly terminalSnapshots = new Map<string, ToWebview>();
  private readonly activeTurns = new Set<string>();
  private readonly pending = new Map<string, PendingPermission>();
  private permissionSeq = 0;
  private status: ToWebview = { type: 'status', state: 'starting' };
  private loading: { sessionId: string; sawUpdate: boolean } | null = null;
  private contextLabel: ToWebview = { type: 'editorContext', label: null };

  constructor(private readonly host: ControllerHost) {}

  get currentSessionId(): string | null {
    return this.sessionId;
  }

  get running(): boolean {
    return this.sessionId !== null && this.activeTurns.has(this.sessionId);
  }

  // ---- view wiring ---------------------------------------------------------

  attachView(view: ChatViewPort): void {
    this.view = view;
  }

  detachView(view: ChatViewPort): void {
    if (this.view === view) this.view = undefined;
  }

  /** Everything a freshly loaded webview needs, in order. */
  snapshot(): ToWebview[] {
    const out: ToWebview[] = [this.status];
    if (this.history.length === 0 || this.history[0]!.type !== 'reset') {
      out.push({ type: 'reset', sessionId: this.sessionId, title: this.title });
    }
    out.push(...this.history, ...this.terminalSnapshots.values(), this.contextLabel, { type: 'turnState', running: this.running });
    return out;
  }

  /** What the context toggle would send now (the extension calls this as the editor changes). */
  setEditorContext(label: string | null): void {
    if (this.contextLabel.type === 'editorContext' && this.contextLabel.label === label) return;
    this.contextLabel = { type: 'editorContext', label };
    this.view?.post(this.contextLabel);
  }

  setStatus(state: ServerState, message?: string | null, model?: string | null): void {
    this.status = { type: 'status', state, message: message ?? null, model: model ?? null };
    this.view?.post(this.status);
  }

  /** Handle one message from the webview. */
  async handleMessage(msg: ToExtension): Promise<void> {
    switch (msg.type) {
      case 'ready':
        for (const m of this.snapshot()) this.view?.post(m);
        return;
      case 'prompt':
        // Typed while a turn runs → steer it; otherwise start a turn (with the editor context and the
        // mentioned files when asked).
        if (this.running) await this.steer(msg.text);
        else {
          const context = msg.context ? this.host.editorContext?.() : undefined;
          const prompt = promptWithMentions(msg.text, msg.mentions ?? []);
          await this.prompt(prompt, { text: msg.text, context: context ? contextNote(context) : null }, context);
        }
        return;
      case 'steer':
        if (this.running) await this.steer(msg.text);
        else await this.prompt(msg.text);
        return;
      case 'mentionQuery': {
        const items = (await this.host.findFiles?.(msg.query).catch(() => [])) ?? [];
        this.view?.post({ type: 'mentionResults', query: msg.query, items });
        return;
      }
      case 'commandQuery':
        this.view?.post({ type: 'commandResults', query: msg.query, items: await this.listCommands(msg.query) });
        return;
      case 'stop':
        return this.stop();
      case 'compact':
        return this.compact(msg.focus);
      case 'undo':
        return this.undo();
      case 'newSession':
        await this.newSession();
        return;
      case 'listSessions':
        return this.listSessions(msg.query, msg.cursor);
      case 'loadSession':
        return this.loadSession(msg.sessionId);
      case 'permission':
        this.settlePermission(msg.requestId, msg.optionId);
        return;
      case 'openLocation':
        this.host.openLocation?.(msg.path, msg.line);
        return;
      case 'openTerminal':
        this.host.openTerminal?.(msg.terminalId);
        return;
    }
  }

  // ---- server → panel ------------------------------------------------------

  /** An `agent/update` notification. Updates for other sessions are ignored. */
  onUpdate(params: AgentUpdateParams): void {
    if (!params || typeof params.sessionId !== 'string' || !params.update) return;
    // The server announces every turn, including ones it starts itself (a steer, a code action).
    const turn = turnStateOf(params.update);
    if (turn !== null) this.setRunning(params.sessionId, turn === 'running');
    if (params.sessionId !== this.sessionId) return;
    if (this.loading?.sessionId === params.sessionId) this.loading.sawUpdate = true;
    const u = params.update as { sessionUpdate: string; title?: string | null };
    if (u.sessionUpdate === 'session_info_update' && typeof u.title === 'string') this.title = u.title;
    this.emit({ type: 'update', sessionId: params.sessionId, update: params.update });
  }

  onTerminalOutput(terminalId: string, output: string, exit: { exitCode: number | null; signal: string | null } | null): void {
    const tail = output.length > 64_000 ? output.slice(-64_000) : output;
    const msg: ToWebview = {
      type: 'terminalOutput',
      terminalId,
      output: tail,
      exitCode: exit?.exitCode ?? null,
      signal: exit?.signal ?? null,
    };
    this.terminalSnapshots.set(terminalId, msg);
    this.view?.post(msg);
  }

  /** `agent/requestPermission`: an inline card when the panel shows this session, else a modal. */
  async requestPermission(params: RequestPermissionParams, token?: CancellationLike): Promise<RequestPermissionResult> {
    const options = Array.isArray(params?.options) ? params.options : [];
    if (!this.view || !this.view.isVisible() || params.sessionId !== this.sessionId) {
      const optionId = await this.host.askPermissionModal({ ...params, options });
      return token?.isCancellationRequested ? cancelledOutcome() : outcomeFor(options, optionId);
    }
    const requestId = `perm-${++this.permissionSeq}`;
    const result = new Promise<RequestPermissionResult>((resolve) => {
      this.pending.set(requestId, { params: { ...params, options }, resolve });
    });
    this.emit({ type: 'permissionRequest', requestId, toolCall: params.toolCall ?? { toolCallId: '' }, options });
    token?.onCancellationRequested(() => this.settlePermission(requestId, null));
    return result;
  }

  get pendingPermissionCount(): number {
    return this.pending.size;
  }

  private settlePermission(requestId: string, optionId: string | null): void {
    const p = this.pending.get(requestId);
    if (!p) return;
    this.pending.delete(requestId);
    const outcome = outcomeFor(p.params.options, optionId);
    this.emit({
      type: 'permissionResolved',
      requestId,
      optionId: outcome.outcome.outcome === 'selected' ? outcome.outcome.optionId : null,
    });
    p.resolve(outcome);
  }

  private cancelPermissions(sessionId: string): void {
    for (const [id, p] of [...this.pending]) if (p.params.sessionId === sessionId) this.settlePermission(id, null);
  }

  // ---- panel → server ------------------------------------------------------

  /**
   * Run a turn in the panel's session (creating one if needed).
   * `display` is what the transcript shows for the prompt.
   */
  async prompt(
    prompt: string | ContentBlock[],
    display?: { text: string; context?: string | null },
    editorContext?: EditorContext,
  ): Promise<TurnResult | undefined> {
    const text = display?.text ?? blocksText(prompt);
    if (typeof prompt === 'string' && prompt.trim() === '') return undefined;
    const conn = await this.connect();
    if (!conn) return undefined;
    const sessionId = await this.ensureSession(conn);
    if (!sessionId) return undefined;
    if (this.activeTurns.has(sessionId)) {
      // A turn is already running here: the server would queue this one; steer instead.
      await this.steer(typeof prompt === 'string' ? prompt : blocksText(prompt));
      return undefined;
    }
    this.emit({ type: 'userMessage', text, context: display?.context ?? null });
    this.setRunning(sessionId, true);
    try {
      const params = editorContext ? { sessionId, prompt, context: editorContext } : { sessionId, prompt };
      const result = await conn.request<TurnResult>(Methods.turn, params);
      if (this.sessionId === sessionId) this.emit({ type: 'turnResult', result });
      return result;
    } catch (err) {
      if (this.sessionId === sessionId) {
        const e = errorMessage(err);
        this.emit(
          e.code === -32800
            ? { type: 'notice', level: 'warning', text: 'The turn was cancelled.' }
            : { type: 'notice', level: 'error', text: 'The turn failed.', detail: e.message },
        );
      }
      return undefined;
    } finally {
      this.setRunning(sessionId, false);
    }
  }

  async steer(text: string): Promise<void> {
    if (!text.trim()) return;
    const sessionId = this.sessionId;
    if (!sessionId || !this.activeTurns.has(sessionId)) {
      await this.prompt(text);
      return;
    }
    const conn = await this.connect();
    if (!conn) return;
    this.emit({ type: 'userMessage', text, context: 'steer' });
    try {
      const r = await conn.request<SteerResult>(Methods.steer, { sessionId, text });
      if (r?.outcome === 'startedNewTurn') {
        this.emit({ type: 'notice', level: 'info', text: 'The turn had already finished, so your message started a new turn.' });
      }
    } catch (err) {
      this.emit({ type: 'notice', level: 'error', text: 'Could not steer the turn.', detail: errorMessage(err).message });
    }
  }

  async stop(): Promise<void> {
    const sessionId = this.sessionId;
    if (!sessionId) return;
    this.cancelPermissions(sessionId);
    if (!this.activeTurns.has(sessionId)) return;
    const conn = await this.connect();
    if (!conn) return;
    try {
      await conn.request<{ interrupted: boolean }>(Methods.interrupt, { sessionId });
    } catch (err) {
      this.emit({ type: 'notice', level: 'error', text: 'Could not stop the turn.', detail: errorMessage(err).message });
    }
  }

  async compact(focus?: string): Promise<void> {
    const sessionId = this.sessionId;
    if (!sessionId) {
      this.emit({ type: 'notice', level: 'info', text: 'Nothing to compact yet: start a conversation first.' });
      return;
    }
    const conn = await this.connect();
    if (!conn) return;
    const params: { sessionId: string; focus?: string } = { sessionId };
    if (focus && focus.trim()) params.focus = focus.trim();
    try {
      const r = await conn.request<CompressResult>(Methods.compress, params);
      const k = (n: number): string => (n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n));
      this.emit({
        type: 'notice',
        level: 'info',
        text: `Context compacted: ${k(r.tokensBefore)} → ${k(r.tokensAfter)} tokens, ${r.messagesBefore} → ${r.messagesAfter} messages.`,
      });
    } catch (err) {
      this.emit({ type: 'notice', level: 'error', text: 'Compaction failed.', detail: errorMessage(err).message });
    }
  }

  async undo(): Promise<void> {
    const sessionId = this.sessionId;
    if (!sessionId) {
      this.emit({ type: 'notice', level: 'info', text: 'Nothing to undo yet.' });
      return;
    }
    const conn = await this.connect();
    if (!conn) return;
    try {
      const r = await conn.request<UndoResult>(Methods.undo, { sessionId, turns: 1 });
      const files = Array.isArray(r?.restoredFiles) ? r.restoredFiles : [];
      this.emit(
        files.length
          ? { type: 'notice', level: 'info', text: `Undid the last turn: restored ${files.length} file${files.length === 1 ? '' : 's'}.`, detail: files.join('\n') }
          : { type: 'notice', level: 'info', text: 'The last turn changed no files; nothing to restore.' },
      );
    } catch (err) {
      this.emit({ type: 'notice', level: 'error', text: 'Undo failed.', detail: errorMessage(err).message });
    }
  }

  async newSession(): Promise<string | null> {
    const conn = await this.connect();
    if (!conn) return null;
    try {
      const params: { cwd?: string } = {};
      const cwd = this.host.cwd();
      if (cwd) params.cwd = cwd;
      const r = await conn.request<{ sessionId: string }>(Methods.newSession, params);
      this.switchTo(r.sessionId, null, false);
      return r.sessionId;
    } catch (err) {
      this.emit({ type: 'notice', level: 'error', text: 'Could not start a new session.', detail: errorMessage(err).message });
      return null;
    }
  }

  /** The slash commands whose name starts with `query` (the session's, else the workspace's); none on error. */
  async listCommands(query: string): Promise<SlashCommand[]> {
    const conn = await this.connect();
    if (!conn) return [];
    const cwd = this.host.cwd();
    const params = this.sessionId ? { sessionId: this.sessionId } : cwd ? { cwd } : {};
    try {
      const r = await conn.request<{ commands?: SlashCommand[] }>(Methods.listCommands, params);
      const wanted = query.toLowerCase();
      return (r?.commands ?? []).filter((c) => c.name.toLowerCase().startsWith(wanted)).slice(0, 50);
    } catch {
      return []; // an older server without agent/listCommands: no completion
    }
  }

  async listSessions(query?: string, cursor?: string): Promise<void> {
    const conn = await this.connect();
    if (!conn) return;
    try {
      const params: { cwd?: string; query?: string; cursor?: string } = {};
      const cwd = this.host.cwd();
      if (cwd) params.cwd = cwd;
      if (query && query.trim()) params.query = query.trim();
      if (cursor) params.cursor = cursor;
      const r = await conn.request<ListSessionsResult>(Methods.listSessions, params);
      this.view?.post({ type: 'sessions', sessions: r?.sessions ?? [], nextCursor: r?.nextCursor ?? null, append: !!cursor });
    } catch (err) {
      this.emit({ type: 'notice', level: 'error', text: 'Could not list sessions.', detail: errorMessage(err).message });
    }
  }

  /** Switch to a stored session; its replayed updates rebuild the transcript. */
  async loadSession(sessionId: string): Promise<void> {
    const conn = await this.connect();
    if (!conn) return;
    this.switchTo(sessionId, null, true);
    this.loading = { sessionId, sawUpdate: false };
    try {
      const r = await conn.request<{ sessionId: string; messages?: unknown[] }>(Methods.loadSession, { sessionId });
      if (this.sessionId === sessionId && this.loading && !this.loading.sawUpdate && Array.isArray(r?.messages)) {
        // The server answered without replaying: rebuild from the transcript.
        for (const u of transcriptToUpdates(r.messages)) this.emit({ type: 'update', sessionId, update: u });
      }
    } catch (err) {
      this.emit({ type: 'notice', level: 'error', text: 'Could not load the session.', detail: errorMessage(err).message });
    } finally {
      if (this.loading?.sessionId === sessionId) this.loading = null;
      if (this.sessionId === sessionId) this.emit({ type: 'turnState', running: this.running });
    }
  }

  // ---- internals -----------------------------------------------------------

  private async connect(): Promise<AgentRequester | undefined> {
    try {
      return await this.host.connection();
    } catch (err) {
      this.emit({ type: 'notice', level: 'error', text: 'The agentls server is not running.', detail: errorMessage(err).message });
      return undefined;
    }
  }

  private creating: Promise<string | null> | null = null;

  /** The panel's session, created on first use (two quick prompts share one creation). */
  private ensureSession(conn: AgentRequester): Promise<string | null> {
    if (this.sessionId) return Promise.resolve(this.sessionId);
    this.creating ??= (async () => {
      try {
        const params: { cwd?: string } = {};
        const cwd = this.host.cwd();
        if (cwd) params.cwd = cwd;
        const r = await conn.request<{ sessionId: string }>(Methods.newSession, params);
        // Keep what the user already sees (e.g. an error notice) — just adopt the id.
        if (!this.sessionId) {
          this.sessionId = r.sessionId;
          this.emit({ type: 'session', sessionId: r.sessionId });
        }
        return this.sessionId;
      } catch (err) {
        this.emit({ type: 'notice', level: 'error', text: 'Could not start a session.', detail: errorMessage(err).message });
        return null;
      } finally {
        this.creating = null;
      }
    })();
    return this.creating;
  }

  private switchTo(sessionId: string, title: string | null, replaying: boolean): void {
    this.sessionId = sessionId;
    this.title = title;
    this.history = [];
    this.terminalSnapshots.clear();
    this.emit({ type: 'reset', sessionId, title, replaying });
    this.emit({ type: 'turnState', running: this.running });
    this.host.onRunningChanged?.(this.running);
  }

  private setRunning(sessionId: string, running: boolean): void {
    if (running) this.activeTurns.add(sessionId);
    else this.activeTurns.delete(sessionId);
    if (this.sessionId === sessionId) {
      this.emit({ type: 'turnState', running });
      this.host.onRunningChanged?.(running);
    }
  }

  private emit(msg: ToWebview): void {
    const last = this.history[this.history.length - 1];
    const merged = last ? mergeChunk(last, msg) : null;
    if (merged) this.history[this.history.length - 1] = merged;
    else if (msg.type === 'turnState' && last?.type === 'turnState') this.history[this.history.length - 1] = msg;
    else {
      this.history.push(msg);
      if (this.history.length > HISTORY_LIMIT) this.history.splice(1, this.history.length - HISTORY_LIMIT);
    }
    this.view?.post(msg);
  }
}

/** The transcript's note under a prompt sent with the editor context ("with app.py lines 3–5"). */
function contextNote(ctx: EditorContext): string {
  const name = (p: string): string => p.slice(p.replace(/\\/g, '/').lastIndexOf('/') + 1);
  const sel = ctx.selection;
  if (sel && sel.text.trim()) {
    const { start, end } = sel.range;
    const last = end.character === 0 && end.line > start.line ? end.line - 1 : end.line;
    return `${name(sel.path)} ${last === start.line ? `line ${start.line + 1}` : `lines ${start.line + 1}–${last + 1}`}`;
  }
  return ctx.activeFile ? name(ctx.activeFile.path) : 'editor context';
}

/** Fallback replay: an OpenAI-shaped transcript as user/agent message chunks. */
export function transcriptToUpdates(messages: unknown[]): SessionUpdate[] {
  const out: SessionUpdate[] = [];
  for (const m of messages) {
    if (!m || typeof m !== 'object') continue;
    const { role, content } = m as { role?: unknown; content?: unknown };
    let text = '';
    if (typeof content === 'string') text = content;
    else if (Array.isArray(content)) {
      text = content
        .map((c) => (c && typeof c === 'object' && typeof (c as { text?: unknown }).text === 'string' ? (c as { text: string }).text : ''))
        .join('');
    }
    if (!text) continue;
    if (role === 'user') out.push({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text } });
    else if (role === 'assistant') out.push({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } });
  }
  return out;
}

/** `running` / `idle` from a `session_info_update` carrying `_meta.agentls.turn`, else null. */
export function turnStateOf(update: unknown): 'running' | 'idle' | null {
  const u = update as { sessionUpdate?: string; _meta?: { agentls?: { turn?: { state?: unknown } } } } | null;
  if (!u || u.sessionUpdate !== 'session_info_update') return null;
  const state = u._meta?.agentls?.turn?.state;
  return state === 'running' || state === 'idle' ? state : null;
}
