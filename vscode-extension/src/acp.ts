/**
 * Wire types shared by the extension host and the webview.
 *
 * The agentls server forwards ACP `SessionUpdate`s inside `agent/update`
 * notifications, so these follow the ACP v1 schema (camelCase). Only the
 * fields the UI reads are typed; everything else passes through untouched.
 * No `vscode` import here: the webview bundle and the unit tests use it.
 */

export type ToolKind =
  | 'read'
  | 'edit'
  | 'delete'
  | 'move'
  | 'search'
  | 'execute'
  | 'think'
  | 'fetch'
  | 'switch_mode'
  | 'other';

export type ToolCallStatus = 'pending' | 'in_progress' | 'completed' | 'failed';

export interface TextBlock {
  type: 'text';
  text: string;
}

export interface ResourceBlock {
  type: 'resource';
  resource: { uri: string; text?: string; blob?: string; mimeType?: string | null };
}

export interface ResourceLinkBlock {
  type: 'resource_link';
  uri: string;
  name: string;
  title?: string | null;
  mimeType?: string | null;
}

export interface ImageBlock {
  type: 'image';
  data: string;
  mimeType: string;
  uri?: string | null;
}

export type ContentBlock = TextBlock | ResourceBlock | ResourceLinkBlock | ImageBlock | { type: string; [k: string]: unknown };

export interface ToolCallLocation {
  path: string;
  line?: number | null;
}

export type ToolCallContent =
  | { type: 'content'; content: ContentBlock }
  | { type: 'diff'; path: string; oldText?: string | null; newText: string }
  | { type: 'terminal'; terminalId: string };

export interface ToolCallFields {
  toolCallId: string;
  title?: string | null;
  kind?: ToolKind | null;
  status?: ToolCallStatus | null;
  content?: ToolCallContent[] | null;
  locations?: ToolCallLocation[] | null;
  rawInput?: unknown;
  rawOutput?: unknown;
  /** agentls: a subagent's tool call names its delegate_task call (docs/acp.md "Subagents"). */
  _meta?: { agentls?: { parentToolCallId?: unknown } | null } | null;
}

/** The delegate_task call a subagent's tool call belongs to, or null. */
export function parentToolCallOf(f: ToolCallFields): string | null {
  const parent = f._meta?.agentls?.parentToolCallId;
  return typeof parent === 'string' && parent ? parent : null;
}

export type PlanEntryStatus = 'pending' | 'in_progress' | 'completed';

export interface PlanEntry {
  content: string;
  priority?: 'high' | 'medium' | 'low';
  status: PlanEntryStatus;
}

export type CompactionStatus = 'in_progress' | 'completed' | 'failed' | 'cancelled';

export type SessionUpdate =
  | { sessionUpdate: 'user_message_chunk'; content: ContentBlock; messageId?: string | null }
  | { sessionUpdate: 'agent_message_chunk'; content: ContentBlock; messageId?: string | null }
  | { sessionUpdate: 'agent_thought_chunk'; content: ContentBlock; messageId?: string | null }
  | ({ sessionUpdate: 'tool_call' } & ToolCallFields)
  | ({ sessionUpdate: 'tool_call_update' } & ToolCallFields)
  | { sessionUpdate: 'plan'; entries: PlanEntry[] }
  | { sessionUpdate: 'usage_update'; used: number; size: number; cost?: { amount: number; currency: string } | null }
  | { sessionUpdate: 'compaction_update'; compactionId: string; status: CompactionStatus; summary?: string | null }
  | { sessionUpdate: 'session_info_update'; title?: string | null; updatedAt?: string | null }
  | { sessionUpdate: string; [k: string]: unknown };

/** `agent/update` notification params. */
export interface AgentUpdateParams {
  sessionId: string;
  update: SessionUpdate;
}

export type PermissionOptionKind = 'allow_once' | 'allow_always' | 'reject_once' | 'reject_always';

export interface PermissionOption {
  optionId: string;
  name: string;
  kind: PermissionOptionKind;
}

/** `agent/requestPermission` params. */
export interface RequestPermissionParams {
  sessionId: string;
  toolCall: ToolCallFields;
  options: PermissionOption[];
}

export type PermissionOutcome = { outcome: 'selected'; optionId: string } | { outcome: 'cancelled' };

export interface RequestPermissionResult {
  outcome: PermissionOutcome;
}

/** `agent/turn` result. */
export interface TurnResult {
  sessionId?: string;
  finalResponse: string | null;
  completed: boolean;
  apiCalls?: number;
  exitReason?: string;
  interrupted?: boolean;
  failed?: boolean;
  partial?: boolean;
  usage?: { promptTokens?: number; completionTokens?: number; cachedTokens?: number; [k: string]: unknown };
  error?: { category?: string; message: string };
  pendingSteer?: string | null;
  /** What the turn really did (agent/footer.py): `summary` is null when there is nothing to report. */
  outcome?: TurnOutcome;
}

export interface TurnOutcome {
  summary: string | null;
  filesChanged?: { path: string; added: number; removed: number; created?: boolean; deleted?: boolean }[];
  failedCalls?: { tool: string; reason: string; path?: string | null }[];
  refused?: { action: string; title: string; reason: string }[];
  editsFailed?: boolean;
  lastCallFailed?: boolean;
  toolsStopped?: string | null;
}

export interface SessionSummary {
  sessionId: string;
  title?: string | null;
  cwd?: string | null;
  updatedAt?: string | null;
  /** agentls: the subagents' sessions this one started (delegate_task), listed under it. */
  _meta?: { agentls?: { children?: { sessionId?: unknown; title?: unknown }[] | null } | null } | null;
}

/** A listed session's subagent sessions (id and title), well-formed ones only. */
export function childSessionsOf(s: SessionSummary): { sessionId: string; title: string }[] {
  const list = s._meta?.agentls?.children;
  if (!Array.isArray(list)) return [];
  return list
    .filter((c) => c && typeof c.sessionId === 'string')
    .map((c) => ({ sessionId: c.sessionId as string, title: typeof c.title === 'string' && c.title ? c.title : 'Subagent' }));
}

export interface ListSessionsResult {
  sessions: SessionSummary[];
  nextCursor?: string | null;
}

export interface CompressResult {
  tokensBefore: number;
  tokensAfter: number;
  messagesBefore: number;
  messagesAfter: number;
  summary?: string | null;
}

export interface UndoResult {
  restoredFiles: string[];
}

export interface SteerResult {
  outcome: 'queued' | 'startedNewTurn' | string;
}

/** Custom LSP method names (docs/protocol.md). */
export const Methods = {
  newSession: 'agent/newSession',
  turn: 'agent/turn',
  steer: 'agent/steer',
  interrupt: 'agent/interrupt',
  compress: 'agent/compress',
  listSessions: 'agent/listSessions',
  loadSession: 'agent/loadSession',
  undo: 'agent/undo',
  update: 'agent/update',
  requestPermission: 'agent/requestPermission',
  terminalCreate: 'agent/terminal/create',
  terminalOutput: 'agent/terminal/output',
  terminalWaitForExit: 'agent/terminal/waitForExit',
  terminalKill: 'agent/terminal/kill',
  terminalRelease: 'agent/terminal/release',
  diagnostics: 'agent/diagnostics',
  listCommands: 'agent/listCommands',
} as const;

/** Concatenate the text of a content block list (non-text blocks are skipped). */
export function blocksText(blocks: ContentBlock[] | string): string {
  if (typeof blocks === 'string') return blocks;
  return blocks
    .map((b) => (b.type === 'text' ? (b as TextBlock).text : ''))
    .filter((s) => s.length > 0)
    .join('\n\n');
}

/** The text carried by one content block, if any. */
export function blockText(block: ContentBlock | undefined | null): string {
  if (!block) return '';
  if (block.type === 'text') return (block as TextBlock).text ?? '';
  if (block.type === 'resource') {
    const r = (block as ResourceBlock).resource;
    return r?.text ?? '';
  }
  return '';
}
