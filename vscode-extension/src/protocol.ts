/**
 * Messages between the extension host and the chat webview (`postMessage`).
 *
 * This module has no `vscode` import: both sides and the browser tests use it.
 *
 * Webview → extension (`ToExtension`):
 *   ready                      the webview script loaded; send it the state
 *   prompt {text, context?, mentions?}  start a turn with this text (idle); context: send the
 *                              active file and selection; mentions: the `@file`s picked in the box
 *   mentionQuery {query}       workspace files for an `@` being typed → mentionResults
 *   commandQuery {query}       slash commands for a `/` being typed → commandResults
 *   steer {text}               add guidance to the running turn → agent/steer
 *   stop                       stop the running turn → agent/interrupt
 *   compact {focus?}           compress the context → agent/compress
 *   undo                       revert the last turn's edits → agent/undo
 *   newSession                 start a fresh session → agent/newSession
 *   listSessions {query?, cursor?}  ask for (more of) the session list → agent/listSessions
 *   loadSession {sessionId}    switch to a stored session → agent/loadSession
 *   permission {requestId, optionId|null}  answer an agent/requestPermission
 *                              card (null = cancelled)
 *   openLocation {path, line?} open a file at a line
 *   openTerminal {terminalId}  reveal a VS Code terminal the agent created
 *
 * Extension → webview (`ToWebview`):
 *   reset {sessionId, title?, replaying?}  clear the transcript for a session
 *   session {sessionId}                    the first prompt created this session (keep the transcript)
 *   update {sessionId, update}             one ACP SessionUpdate
 *   userMessage {text, context?}           echo of a prompt the user sent
 *   turnState {running}                    a turn started or ended
 *   turnResult {result}                    the agent/turn result
 *   notice {level, text, detail?}          info / warning / error line
 *   sessions {sessions, nextCursor?, append?}  the session picker's list (append: a further page)
 *   permissionRequest {requestId, toolCall, options}
 *   permissionResolved {requestId, optionId|null}
 *   terminalOutput {terminalId, output, exitCode?}  live terminal text
 *   status {state, message?, model?}       server connection state
 *   focusInput {text?}                     focus the prompt box (prefill)
 *   editorContext {label}                  what the context toggle would send ("app.py · lines 3–5"; null: nothing)
 *   mentionResults {query, items}          files for an `@` mention, best first
 *   commandResults {query, items}          slash commands whose name starts with the query
 */

import type { Mention } from './core/context';
import type {
  ListSessionsResult,
  PermissionOption,
  SessionSummary,
  SessionUpdate,
  ToolCallFields,
  TurnResult,
} from './acp';

export type ToExtension =
  | { type: 'ready' }
  | { type: 'prompt'; text: string; context?: boolean; mentions?: Mention[] }
  | { type: 'mentionQuery'; query: string }
  | { type: 'commandQuery'; query: string }
  | { type: 'steer'; text: string }
  | { type: 'stop' }
  | { type: 'compact'; focus?: string }
  | { type: 'undo' }
  | { type: 'newSession' }
  | { type: 'listSessions'; query?: string; cursor?: string }
  | { type: 'loadSession'; sessionId: string }
  | { type: 'permission'; requestId: string; optionId: string | null }
  | { type: 'openLocation'; path: string; line?: number | null }
  | { type: 'openTerminal'; terminalId: string };

export type NoticeLevel = 'info' | 'warning' | 'error';

export type ServerState = 'starting' | 'ready' | 'stopped' | 'error';

export type ToWebview =
  | { type: 'reset'; sessionId: string | null; title?: string | null; replaying?: boolean }
  | { type: 'session'; sessionId: string }
  | { type: 'update'; sessionId: string; update: SessionUpdate }
  | { type: 'userMessage'; text: string; context?: string | null }
  | { type: 'turnState'; running: boolean }
  | { type: 'turnResult'; result: TurnResult }
  | { type: 'notice'; level: NoticeLevel; text: string; detail?: string | null }
  | { type: 'sessions'; sessions: SessionSummary[]; nextCursor?: ListSessionsResult['nextCursor']; append?: boolean }
  | { type: 'permissionRequest'; requestId: string; toolCall: ToolCallFields; options: PermissionOption[] }
  | { type: 'permissionResolved'; requestId: string; optionId: string | null }
  | { type: 'terminalOutput'; terminalId: string; output: string; exitCode?: number | null; signal?: string | null }
  | { type: 'status'; state: ServerState; message?: string | null; model?: string | null }
  | { type: 'focusInput'; text?: string }
  | { type: 'editorContext'; label: string | null }
  | { type: 'mentionResults'; query: string; items: Mention[] }
  | { type: 'commandResults'; query: string; items: SlashCommand[] };

/** One entry of the server's `agent/listCommands` (docs/protocol.md). */
export interface SlashCommand {
  name: string;
  description: string;
  argumentHint?: string | null;
  kind?: string;
}

/** Narrow an unknown `postMessage` payload from the webview. */
export function isToExtension(value: unknown): value is ToExtension {
  if (!value || typeof value !== 'object') return false;
  const m = value as { type?: unknown };
  switch (m.type) {
    case 'ready':
    case 'stop':
    case 'undo':
    case 'newSession':
      return true;
    case 'prompt': {
      const p = m as { text?: unknown; context?: unknown; mentions?: unknown };
      return (
        typeof p.text === 'string' &&
        (p.context === undefined || typeof p.context === 'boolean') &&
        (p.mentions === undefined ||
          (Array.isArray(p.mentions) &&
            p.mentions.every((x: unknown) => !!x && typeof x === 'object' && typeof (x as Mention).path === 'string' && typeof (x as Mention).uri === 'string')))
      );
    }
    case 'steer':
      return typeof (m as { text?: unknown }).text === 'string';
    case 'mentionQuery':
    case 'commandQuery':
      return typeof (m as { query?: unknown }).query === 'string';
    case 'compact': {
      const f = (m as { focus?: unknown }).focus;
      return f === undefined || typeof f === 'string';
    }
    case 'listSessions': {
      const { query, cursor } = m as { query?: unknown; cursor?: unknown };
      return (query === undefined || typeof query === 'string') && (cursor === undefined || typeof cursor === 'string');
    }
    case 'loadSession':
      return typeof (m as { sessionId?: unknown }).sessionId === 'string';
    case 'permission': {
      const p = m as { requestId?: unknown; optionId?: unknown };
      return typeof p.requestId === 'string' && (p.optionId === null || typeof p.optionId === 'string');
    }
    case 'openLocation':
      return typeof (m as { path?: unknown }).path === 'string';
    case 'openTerminal':
      return typeof (m as { terminalId?: unknown }).terminalId === 'string';
    default:
      return false;
  }
}
