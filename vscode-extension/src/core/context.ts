/**
 * What the editor shows, sent with a prompt: the active file and the selection (agent/turn `context`,
 * behind the panel's toggle), and `@file` mentions (resource_link blocks the server reads and inlines).
 * No `vscode` import.
 */

import type { ContentBlock } from '../acp';

export interface Position {
  line: number;
  character: number;
}

/** agent/turn `context` (docs/protocol.md): LSP positions, 0-based. */
export interface EditorContext {
  activeFile?: { path: string; languageId?: string; cursor?: Position };
  selection?: { path: string; languageId?: string; text: string; range: { start: Position; end: Position } };
}

export interface Mention {
  /** Workspace-relative path, as typed after `@`. */
  path: string;
  uri: string;
}

/** The toggle's label: what would be sent ("app.py · lines 3–5", "app.py", or null: nothing). */
export function describeContext(ctx: EditorContext | undefined, relative: (p: string) => string): string | null {
  if (!ctx) return null;
  const sel = ctx.selection;
  if (sel && sel.text.trim()) {
    const { start, end } = sel.range;
    const last = end.character === 0 && end.line > start.line ? end.line - 1 : end.line;
    const lines = last === start.line ? `line ${start.line + 1}` : `lines ${start.line + 1}–${last + 1}`;
    return `${relative(sel.path)} · ${lines}`;
  }
  return ctx.activeFile ? relative(ctx.activeFile.path) : null;
}

/** The `@` mention being typed at `caret` in `text`: its start and query, or null. */
export function mentionAt(text: string, caret: number): { start: number; query: string } | null {
  const before = text.slice(0, caret);
  const m = /(^|\s)@([^\s@]*)$/.exec(before);
  if (!m) return null;
  return { start: caret - m[2]!.length - 1, query: m[2]! };
}

/** Workspace paths for a query, best first: file-name prefix, then file-name substring, then path subsequence. */
export function rankFiles(paths: readonly string[], query: string, limit = 20): string[] {
  const q = query.toLowerCase();
  const scored: { path: string; score: number }[] = [];
  for (const path of paths) {
    const lower = path.toLowerCase();
    const name = lower.slice(lower.lastIndexOf('/') + 1);
    let score: number;
    if (!q) score = 3;
    else if (name.startsWith(q)) score = 0;
    else if (name.includes(q)) score = 1;
    else if (lower.includes(q)) score = 2;
    else if (isSubsequence(q, lower)) score = 4;
    else continue;
    scored.push({ path, score });
  }
  scored.sort((a, b) => a.score - b.score || a.path.length - b.path.length || a.path.localeCompare(b.path));
  return scored.slice(0, limit).map((s) => s.path);
}

function isSubsequence(q: string, s: string): boolean {
  let i = 0;
  for (const ch of s) if (ch === q[i] && ++i === q.length) return true;
  return q.length === 0;
}

/**
 * The prompt for `text` with its mentions: the text, then one `resource_link` per mention still in the
 * text (`@path`), or the plain text when there is none.
 */
export function promptWithMentions(text: string, mentions: readonly Mention[]): string | ContentBlock[] {
  const seen = new Set<string>();
  const links: ContentBlock[] = [];
  for (const m of mentions) {
    if (seen.has(m.uri)) continue;
    const at = new RegExp(`(^|\\s)@${escapeRegExp(m.path)}(?=$|[\\s.,;:!?)\\]])`);
    if (!at.test(text)) continue;
    seen.add(m.uri);
    links.push({ type: 'resource_link', uri: m.uri, name: m.path });
  }
  return links.length ? [{ type: 'text', text }, ...links] : text;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
