/**
 * The chat view's state and its reducer: every extension → webview message
 * goes through `ChatModel.apply`. Pure (no DOM, no `vscode`), so it is unit
 * tested directly. Each transcript item carries a `rev` that changes when the
 * item does, which lets the renderer update cards in place.
 */

import {
  blockText,
  parentToolCallOf,
  type CompactionStatus,
  type ContentBlock,
  type PermissionOption,
  type PlanEntry,
  type SessionSummary,
  type ToolCallContent,
  type ToolCallFields,
  type ToolCallLocation,
  type ToolCallStatus,
  type ToolKind,
  type TurnResult,
} from '../acp';
import type { NoticeLevel, ServerState, ToWebview } from '../protocol';

interface ItemBase {
  id: string;
  rev: number;
}

export interface UserItem extends ItemBase {
  kind: 'user';
  text: string;
  /** "steer" for steering messages, or a short context label (a selection). */
  context: string | null;
  /** Built from replayed `user_message_chunk`s. */
  fromChunks: boolean;
  messageId: string | null;
}

export interface AgentItem extends ItemBase {
  kind: 'agent';
  text: string;
  messageId: string | null;
}

export interface ThoughtItem extends ItemBase {
  kind: 'thought';
  text: string;
  messageId: string | null;
}

export interface ToolItem extends ItemBase {
  kind: 'tool';
  toolCallId: string;
  title: string;
  toolKind: ToolKind;
  status: ToolCallStatus;
  content: ToolCallContent[];
  locations: ToolCallLocation[];
  rawInput: unknown;
  /** A subagent's call: the delegate_task card it is nested under. */
  parentToolCallId: string | null;
}

export interface PermissionItem extends ItemBase {
  kind: 'permission';
  requestId: string;
  toolCall: ToolCallFields;
  options: PermissionOption[];
  resolved: boolean;
  chosen: string | null;
}

export interface CompactionItem extends ItemBase {
  kind: 'compaction';
  compactionId: string;
  status: CompactionStatus;
  summary: string | null;
}

export interface NoticeItem extends ItemBase {
  kind: 'notice';
  level: NoticeLevel;
  text: string;
  detail: string | null;
}

export type Item = UserItem | AgentItem | ThoughtItem | ToolItem | PermissionItem | CompactionItem | NoticeItem;

export interface TerminalView {
  output: string;
  exitCode: number | null;
  signal: string | null;
  done: boolean;
}

/** Which non-transcript parts changed since the last render. */
export interface Dirty {
  reset: boolean;
  header: boolean;
  plan: boolean;
  usage: boolean;
  composer: boolean;
  sessions: boolean;
  mcp: boolean;
  terminals: Set<string>;
}

/** One MCP server of the session, as `session_info_update._meta.agentls.mcpServers` reports it (docs/mcp.md). */
export interface McpServerView {
  name: string;
  state: 'starting' | 'ready' | 'failed' | 'crashed' | 'stopped';
  toolCount: number;
  lastError: string | null;
}

const MCP_STATES = new Set(['starting', 'ready', 'failed', 'crashed', 'stopped']);

/** The servers of an update's `_meta.agentls.mcpServers`, or null when it carries none. */
export function mcpServersOf(update: Record<string, unknown>): McpServerView[] | null {
  const meta = update._meta as { agentls?: { mcpServers?: unknown } } | undefined;
  const list = meta?.agentls?.mcpServers;
  if (!Array.isArray(list)) return null;
  return list
    .filter((s): s is Record<string, unknown> => !!s && typeof s === 'object' && typeof (s as { name?: unknown }).name === 'string')
    .map((s) => ({
      name: String(s.name),
      state: (MCP_STATES.has(String(s.state)) ? s.state : 'failed') as McpServerView['state'],
      toolCount: Number.isFinite(Number(s.toolCount)) ? Number(s.toolCount) : 0,
      lastError: typeof s.lastError === 'string' ? s.lastError : null,
    }));
}

const TOOL_KINDS = new Set<ToolKind>(['read', 'edit', 'delete', 'move', 'search', 'execute', 'think', 'fetch', 'switch_mode', 'other']);
const TOOL_STATUSES = new Set<ToolCallStatus>(['pending', 'in_progress', 'completed', 'failed']);

export class ChatModel {
  sessionId: string | null = null;
  title: string | null = null;
  items: Item[] = [];
  plan: PlanEntry[] = [];
  usage: { used: number; size: number } | null = null;
  mcp: McpServerView[] = [];
  running = false;
  replaying = false;
  sessions: SessionSummary[] | null = null;
  sessionsCursor: string | null = null;
  terminals = new Map<string, TerminalView>();
  server: { state: ServerState; message: string | null; model: string | null } = { state: 'starting', message: null, model: null };
  dirty: Dirty = ChatModel.cleanDirty();

  private seq = 0;
  private revSeq = 0;
  private byToolCall = new Map<string, ToolItem>();
  private byRequest = new Map<string, PermissionItem>();
  private byCompaction = new Map<string, CompactionItem>();
  /** Index into `items` where the current turn started (its user message). */
  private turnStart = 0;

  static cleanDirty(): Dirty {
    return { reset: false, header: false, plan: false, usage: false, composer: false, sessions: false, mcp: false, terminals: new Set() };
  }

  /** Clear and return what changed. */
  takeDirty(): Dirty {
    const d = this.dirty;
    this.dirty = ChatModel.cleanDirty();
    return d;
  }

  get pendingPermissions(): PermissionItem[] {
    return [...this.byRequest.values()].filter((p) => !p.resolved);
  }

  toolItem(toolCallId: string): ToolItem | undefined {
    return this.byToolCall.get(toolCallId);
  }

  apply(msg: ToWebview): void {
    switch (msg.type) {
      case 'reset':
        this.reset(msg.sessionId, msg.title ?? null, !!msg.replaying);
        return;
      case 'session':
        this.sessionId = msg.sessionId;
        this.dirty.header = this.dirty.composer = true;
        return;
      case 'update':
        this.applyUpdate(msg.update as { sessionUpdate: string } & Record<string, unknown>);
        return;
      case 'userMessage':
        this.turnStart = this.items.length;
        this.push<UserItem>({ kind: 'user', text: msg.text, context: msg.context ?? null, fromChunks: false, messageId: null });
        this.replaying = false;
        return;
      case 'turnState':
        if (this.running !== msg.running) {
          this.running = msg.running;
          this.dirty.composer = true;
        }
        if (!msg.running && this.replaying) {
          this.replaying = false;
          this.dirty.composer = true;
        }
        return;
      case 'turnResult':
        this.applyResult(msg.result);
        return;
      case 'notice':
        this.notice(msg.level, msg.text, msg.detail ?? null);
        return;
      case 'sessions':
        this.sessions = msg.append ? [...(this.sessions ?? []), ...(msg.sessions ?? [])] : (msg.sessions ?? []);
        this.sessionsCursor = msg.nextCursor ?? null;
        this.dirty.sessions = true;
        return;
      case 'permissionRequest': {
        const item = this.push<PermissionItem>({
          kind: 'permission',
          requestId: msg.requestId,
          toolCall: msg.toolCall,
          options: msg.options ?? [],
          resolved: false,
          chosen: null,
        });
        this.byRequest.set(msg.requestId, item);
        return;
      }
      case 'permissionResolved': {
        const item = this.byRequest.get(msg.requestId);
        if (item && !item.resolved) {
          item.resolved = true;
          item.chosen = msg.optionId;
          this.touch(item);
        }
        return;
      }
      case 'terminalOutput':
        this.adoptTerminal(msg.terminalId);
        this.terminals.set(msg.terminalId, {
          output: msg.output,
          exitCode: msg.exitCode ?? null,
          signal: msg.signal ?? null,
          done: msg.exitCode != null || msg.signal != null,
        });
        this.dirty.terminals.add(msg.terminalId);
        return;
      case 'status':
        this.server = { state: msg.state, message: msg.message ?? null, model: msg.model ?? null };
        this.dirty.header = true;
        return;
      case 'focusInput':
        this.dirty.composer = true;
        return;
    }
  }

  private reset(sessionId: string | null, title: string | null, replaying: boolean): void {
    this.sessionId = sessionId;
    this.title = title;
    this.items = [];
    this.plan = [];
    this.usage = null;
    this.mcp = [];
    this.replaying = replaying;
    this.turnStart = 0;
    this.byToolCall.clear();
    this.byRequest.clear();
    this.byCompaction.clear();
    this.terminals.clear();
    this.dirty = ChatModel.cleanDirty();
    this.dirty.reset = true;
    this.dirty.header = this.dirty.plan = this.dirty.usage = this.dirty.composer = true;
  }

  private push<T extends Item>(fields: Omit<T, 'id' | 'rev'>): T {
    const item = { ...fields, id: `i${++this.seq}`, rev: ++this.revSeq } as T;
    this.items.push(item);
    return item;
  }

  private touch(item: Item): void {
    item.rev = ++this.revSeq;
  }

  private notice(level: NoticeLevel, text: string, detail: string | null): void {
    this.push<NoticeItem>({ kind: 'notice', level, text, detail });
  }

  private applyUpdate(u: { sessionUpdate: string } & Record<string, unknown>): void {
    switch (u.sessionUpdate) {
      case 'agent_message_chunk':
      case 'agent_thought_chunk':
        this.dropReplaced(u);
        this.chunk(u.sessionUpdate === 'agent_message_chunk' ? 'agent' : 'thought', u.content as ContentBlock, (u.messageId as string | null) ?? null);
        return;
      case 'user_message_chunk':
        this.userChunk(u.content as ContentBlock, (u.messageId as string | null) ?? null);
        return;
      case 'tool_call':
      case 'tool_call_update':
        this.toolCall(u as unknown as ToolCallFields);
        return;
      case 'plan':
        this.plan = Array.isArray(u.entries) ? (u.entries as PlanEntry[]).filter((e) => e && typeof e.content === 'string') : [];
        this.dirty.plan = true;
        return;
      case 'usage_update': {
        const used = Number(u.used);
        const size = Number(u.size);
        if (Number.isFinite(used) && Number.isFinite(size)) {
          this.usage = { used, size };
          this.dirty.usage = true;
        }
        return;
      }
      case 'compaction_update': {
        const id = String(u.compactionId ?? '');
        const status = (u.status as CompactionStatus) ?? 'in_progress';
        const summary = typeof u.summary === 'string' ? u.summary : null;
        const existing = this.byCompaction.get(id);
        if (existing) {
          existing.status = status;
          if (summary !== null) existing.summary = summary;
          this.touch(existing);
        } else {
          this.byCompaction.set(id, this.push<CompactionItem>({ kind: 'compaction', compactionId: id, status, summary }));
        }
        return;
      }
      case 'session_info_update': {
        if ('title' in u) {
          this.title = typeof u.title === 'string' ? u.title : null;
          this.dirty.header = true;
        }
        const servers = mcpServersOf(u as Record<string, unknown>);
        if (servers) {
          this.mcp = servers;
          this.dirty.mcp = true;
        }
        return;
      }
      default:
        return; // available_commands_update, current_mode_update, … are not shown
    }
  }

  /** A retried model call's stream that does not repeat what was shown names the void message
   *  (`_meta.agentls.replaces`, docs/acp.md): its text and thought leave the transcript. */
  private dropReplaced(u: Record<string, unknown>): void {
    const replaces = (u._meta as { agentls?: { replaces?: unknown } } | undefined)?.agentls?.replaces;
    if (typeof replaces !== 'string' || !replaces) return;
    this.items = this.items.filter((i) => !((i.kind === 'agent' || i.kind === 'thought') && i.messageId === replaces));
  }

  private chunk(kind: 'agent' | 'thought', content: ContentBlock, messageId: string | null): void {
    const text = blockText(content);
    if (!text) return;
    const last = this.items[this.items.length - 1];
    if (last && last.kind === kind && (messageId === null || last.messageId === null || last.messageId === messageId)) {
      last.text += text;
      if (messageId !== null) last.messageId = messageId;
      this.touch(last);
      return;
    }
    this.push<AgentItem | ThoughtItem>({ kind, text, messageId } as Omit<AgentItem, 'id' | 'rev'>);
  }

  private userChunk(content: ContentBlock, messageId: string | null): void {
    const text = blockText(content);
    if (!text) return;
    const last = this.items[this.items.length - 1];
    if (last && last.kind === 'user') {
      if (last.fromChunks && (messageId === null || last.messageId === null || last.messageId === messageId)) {
        last.text += text;
        this.touch(last);
        return;
      }
      // A live echo of the prompt we already show.
      if (!last.fromChunks && !this.replaying && last.text.startsWith(text)) return;
    }
    this.turnStart = this.items.length;
    this.push<UserItem>({ kind: 'user', text, context: null, fromChunks: true, messageId });
  }

  private toolCall(f: ToolCallFields): void {
    if (!f || typeof f.toolCallId !== 'string') return;
    let item = this.byToolCall.get(f.toolCallId);
    if (!item) {
      item = this.push<ToolItem>({
        kind: 'tool',
        toolCallId: f.toolCallId,
        title: f.title ?? 'Tool call',
        toolKind: 'other',
        status: 'pending',
        content: [],
        locations: [],
        rawInput: undefined,
        parentToolCallId: parentToolCallOf(f),
      });
      this.byToolCall.set(f.toolCallId, item);
    }
    if (typeof f.title === 'string' && f.title) item.title = f.title;
    if (f.kind && TOOL_KINDS.has(f.kind)) item.toolKind = f.kind;
    if (f.status && TOOL_STATUSES.has(f.status)) item.status = f.status;
    if (Array.isArray(f.content)) item.content = f.content.filter((c) => c && typeof c === 'object');
    if (Array.isArray(f.locations)) item.locations = f.locations.filter((l) => l && typeof l.path === 'string');
    if (f.rawInput !== undefined && f.rawInput !== null) item.rawInput = f.rawInput;
    this.touch(item);
  }

  /**
   * Live output for a terminal no card shows yet: attach it to the running
   * command card (the server may only name the terminal when the tool ends;
   * its own content then replaces this guess).
   */
  private adoptTerminal(terminalId: string): void {
    if (this.terminals.has(terminalId)) return;
    const shown = this.items.some((i) => i.kind === 'tool' && i.content.some((c) => c.type === 'terminal' && c.terminalId === terminalId));
    if (shown) return;
    for (let k = this.items.length - 1; k >= 0; k--) {
      const i = this.items[k]!;
      if (i.kind !== 'tool' || i.toolKind !== 'execute') continue;
      if ((i.status === 'pending' || i.status === 'in_progress') && !i.content.some((c) => c.type === 'terminal')) {
        i.content = [...i.content, { type: 'terminal', terminalId }];
        this.touch(i);
      }
      return;
    }
  }

  private applyResult(r: TurnResult): void {
    if (!r || typeof r !== 'object') return;
    const since = this.items.slice(this.turnStart);
    const answered = since.some((i) => i.kind === 'agent');
    if (!answered && typeof r.finalResponse === 'string' && r.finalResponse.trim()) {
      this.push<AgentItem>({ kind: 'agent', text: r.finalResponse, messageId: null });
    }
    if (r.failed || r.error) {
      const category = r.error?.category ? ` (${r.error.category.replace(/_/g, ' ')})` : '';
      this.notice('error', `The agent stopped with an error${category}.`, r.error?.message ?? 'No details were given.');
    } else if (r.interrupted || r.exitReason === 'interrupted') {
      this.notice('warning', 'Stopped.', null);
    } else if (r.exitReason === 'cancelled') {
      this.notice('warning', 'The turn was cancelled.', null);
    } else if (r.exitReason === 'budget_exhausted') {
      this.notice('warning', 'The agent reached its iteration limit before finishing.', 'Ask it to continue, or raise agentls.maxIterations.');
    } else if (r.exitReason === 'empty_response') {
      this.notice('warning', 'The model returned an empty response.', null);
    }
    const summary = r.outcome?.summary;
    if (typeof summary === 'string' && summary) {
      // What the turn really did, whatever the model said (files changed, failed or refused calls).
      const trouble = r.outcome?.editsFailed || r.outcome?.lastCallFailed || !!r.outcome?.toolsStopped;
      this.notice(trouble ? 'warning' : 'info', summary, null);
    }
    if (r.pendingSteer) {
      this.notice('info', 'Your steering message did not run: the turn stopped before it could take it.', r.pendingSteer);
    }
  }
}

/** "42.1k" style token counts. */
export function formatTokens(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(n >= 10_000_000 ? 0 : 1)}M`;
  if (n >= 1000) return `${(n / 1000).toFixed(n >= 100_000 ? 0 : 1)}k`;
  return String(Math.round(n));
}

export function usagePercent(usage: { used: number; size: number } | null): number | null {
  if (!usage || !(usage.size > 0)) return null;
  return Math.max(0, Math.min(100, (usage.used / usage.size) * 100));
}

/** "3 min ago" style times for the session picker. */
export function relativeTime(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '';
  const s = Math.round((now - t) / 1000);
  if (s < 45) return 'just now';
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.round(m / 60);
  if (h < 24) return `${h} h ago`;
  const d = Math.round(h / 24);
  if (d < 30) return `${d} d ago`;
  return new Date(t).toISOString().slice(0, 10);
}
