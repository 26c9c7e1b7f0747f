/**
 * HTML for the transcript's cards (user and thought messages, tool calls,
 * permission requests, compactions, notices). Pure string builders: every
 * piece of text goes through escapeHtml or the markdown renderer.
 */

import { blockText } from '../acp';
import { describeToolCall, permissionButtons, resolvedLabel } from '../core/permissions';
import { diffHunks } from './diff';
import { icon, kindIcon, type IconName } from './icons';
import { escapeHtml, renderMarkdown } from './markdown';
import type { CompactionItem, NoticeItem, PermissionItem, TerminalView, ThoughtItem, ToolItem, UserItem } from './state';

const STATUS_LABEL: Record<string, string> = {
  pending: 'Pending',
  in_progress: 'Running',
  completed: 'Done',
  failed: 'Failed',
};

const STATUS_ICON: Record<string, IconName> = {
  pending: 'pending',
  in_progress: 'spinner',
  completed: 'check',
  failed: 'cross',
};

export const PLAN_ICON: Record<string, IconName> = { pending: 'pending', in_progress: 'spinner', completed: 'check' };

export function basename(p: string): string {
  const parts = p.split(/[\\/]/);
  return parts[parts.length - 1] || p;
}

/** Long tool output as head … tail. */
export function clip(text: string, max = 20_000): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n… ${text.length - max} characters omitted …\n${text.slice(-half)}`;
}

const commandOf = (input: unknown): string | undefined => {
  const c = (input as { command?: unknown } | undefined)?.command;
  return typeof c === 'string' ? c : undefined;
};

const cmdLine = (command: string): string => `<div class="cmd-line"><span class="prompt-sign">$</span> ${escapeHtml(command)}</div>`;

export function userHtml(item: UserItem): string {
  const badge =
    item.context === 'steer'
      ? `<span class="badge steer">${icon('steer')}steer</span>`
      : item.context
        ? `<span class="badge ctx">${escapeHtml(item.context)}</span>`
        : '';
  return `<div class="bubble">${badge}<div class="user-text">${escapeHtml(item.text)}</div></div>`;
}

export function thoughtHtml(item: ThoughtItem): string {
  return `<summary><span class="chev">${icon('chevron')}</span>${icon('think')}<span>Thinking</span></summary><div class="md">${renderMarkdown(item.text)}</div>`;
}

export function locationsHtml(locations: { path: string; line?: number | null }[]): string {
  if (!locations.length) return '';
  return (
    '<div class="locations">' +
    locations
      .map(
        (l) =>
          `<a href="#" class="loc file-link" data-path="${escapeHtml(l.path)}"${l.line != null ? ` data-line="${l.line}"` : ''} title="${escapeHtml(l.path)}">` +
          `${escapeHtml(basename(l.path))}${l.line != null ? `<span class="loc-line">:${l.line}</span>` : ''}</a>`,
      )
      .join('') +
    '</div>'
  );
}

/** A tool card's `<summary>` and body. */
export function toolHtml(item: ToolItem, terminals: ReadonlyMap<string, TerminalView>): { html: string; hasBody: boolean } {
  const parts: string[] = [];
  const command = commandOf(item.rawInput);
  if (item.toolKind === 'execute' && command && !item.content.some((c) => c.type === 'terminal')) parts.push(cmdLine(command));
  for (const c of item.content) {
    if (c.type === 'diff') parts.push(diffHtml(c.path, c.oldText, c.newText));
    else if (c.type === 'terminal') parts.push(terminalHtml(c.terminalId, command, terminals.get(c.terminalId)));
    else if (c.type === 'content') {
      const text = blockText(c.content);
      if (text) parts.push(`<pre class="tool-output">${escapeHtml(clip(text))}</pre>`);
    }
  }
  const label = STATUS_LABEL[item.status] ?? item.status;
  const summary =
    `<summary>` +
    `<span class="chev">${icon('chevron')}</span>` +
    `<span class="tool-icon">${kindIcon(item.toolKind)}</span>` +
    `<span class="tool-main"><span class="tool-title">${escapeHtml(item.title)}</span>${locationsHtml(item.locations)}</span>` +
    `<span class="tool-kind">${escapeHtml(item.toolKind.replace('_', ' '))}</span>` +
    `<span class="tool-status" data-status="${item.status}" title="${label}">${icon(STATUS_ICON[item.status] ?? 'pending')}<span class="status-label">${label}</span></span>` +
    `</summary>`;
  const body = parts.join('');
  return { html: summary + (body ? `<div class="tool-body">${body}</div>` : ''), hasBody: !!body };
}

export function diffHtml(path: string, oldText: string | null | undefined, newText: string): string {
  const d = diffHunks(oldText, newText);
  const rows = d.rows
    .map((r) => {
      if (r.type === 'gap') return `<tr class="gap"><td colspan="3">⋯ ${r.skipped} unchanged line${r.skipped === 1 ? '' : 's'}</td></tr>`;
      const oldNo = r.type === 'add' ? '' : r.oldNo;
      const newNo = r.type === 'del' ? '' : r.newNo;
      const sign = r.type === 'add' ? '+' : r.type === 'del' ? '−' : ' ';
      return `<tr class="${r.type}"><td class="ln">${oldNo}</td><td class="ln">${newNo}</td><td class="code"><span class="sign">${sign}</span>${escapeHtml(r.text) || ' '}</td></tr>`;
    })
    .join('');
  return (
    `<div class="diff" data-path="${escapeHtml(path)}">` +
    `<div class="diff-head"><a href="#" class="file-link" data-path="${escapeHtml(path)}" title="${escapeHtml(path)}">${escapeHtml(basename(path))}</a>` +
    `${d.created ? '<span class="diff-new">new file</span>' : ''}` +
    `<span class="diff-stat"><span class="plus">+${d.added}</span> <span class="minus">−${d.removed}</span></span></div>` +
    `<div class="diff-scroll"><table class="diff-table">${rows || '<tr class="gap"><td colspan="3">No changes</td></tr>'}</table></div></div>`
  );
}

export function terminalHtml(terminalId: string, command: string | undefined, t: TerminalView | undefined): string {
  return (
    `<div class="terminal" data-terminal-id="${escapeHtml(terminalId)}">` +
    `<div class="term-head">${icon('terminal')}<span class="term-cmd">${escapeHtml(command || terminalId)}</span>` +
    `<span class="term-exit">${exitLabel(t)}</span>` +
    `<a href="#" class="term-open" data-terminal="${escapeHtml(terminalId)}">Open</a></div>` +
    `<pre class="term-output">${escapeHtml(clip(t?.output ?? ''))}</pre></div>`
  );
}

export function exitLabel(t: TerminalView | undefined): string {
  if (!t || !t.done) return '<span class="term-running">running…</span>';
  if (t.signal) return `<span class="exit-bad">killed (${escapeHtml(t.signal)})</span>`;
  return t.exitCode === 0 ? '<span class="exit-ok">exit 0</span>' : `<span class="exit-bad">exit ${t.exitCode}</span>`;
}

export function permissionHtml(item: PermissionItem): string {
  const call = item.toolCall;
  const command = commandOf(call.rawInput);
  const diffs = (call.content ?? []).map((c) => (c.type === 'diff' ? diffHtml(c.path, c.oldText, c.newText) : '')).join('');
  const buttons = permissionButtons(item.options)
    .map(
      (b) =>
        `<button class="btn ${b.style} small" type="button" data-option-id="${escapeHtml(b.optionId)}" data-kind="${b.kind}"${item.resolved ? ' disabled' : ''}>${escapeHtml(b.label)}</button>`,
    )
    .join('');
  const chosenKind = item.options.find((o) => o.optionId === item.chosen)?.kind ?? '';
  return (
    `<div class="perm-head">${icon('shield')}<span>Permission needed</span></div>` +
    `<div class="perm-title">${escapeHtml(describeToolCall(call))}</div>` +
    (command ? cmdLine(command) : '') +
    locationsHtml(call.locations ?? []) +
    diffs +
    (item.resolved
      ? `<div class="perm-result" data-kind="${escapeHtml(chosenKind)}">${icon(chosenKind.startsWith('allow') ? 'check' : 'cross')}${escapeHtml(resolvedLabel(item.options, item.chosen))}</div>`
      : `<div class="perm-actions">${buttons}</div>`)
  );
}

const COMPACTION_LABEL: Record<string, string> = {
  in_progress: 'Compacting the context…',
  completed: 'Context compacted',
  failed: 'Compaction failed',
  cancelled: 'Compaction cancelled',
};

export function compactionHtml(item: CompactionItem, summaryOpen: boolean): string {
  return (
    `<div class="divider"><span class="line"></span><span class="divider-label">${icon(item.status === 'in_progress' ? 'spinner' : 'compacted')}${COMPACTION_LABEL[item.status] ?? item.status}</span><span class="line"></span></div>` +
    (item.summary
      ? `<details class="compaction-summary"${summaryOpen ? ' open' : ''}><summary><span class="chev">${icon('chevron')}</span>Summary</summary><div class="md">${renderMarkdown(item.summary)}</div></details>`
      : '')
  );
}

export function noticeHtml(item: NoticeItem): string {
  return (
    `<span class="notice-icon">${icon(item.level)}</span><div class="notice-body"><div class="notice-text">${escapeHtml(item.text)}</div>` +
    (item.detail ? `<pre class="notice-detail">${escapeHtml(item.detail)}</pre>` : '') +
    '</div>'
  );
}
