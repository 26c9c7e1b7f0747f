/**
 * Permission option mapping for `agent/requestPermission` (no `vscode` import).
 * Used by the inline card (webview) and the modal fallback (extension).
 */

import type {
  PermissionOption,
  PermissionOptionKind,
  RequestPermissionParams,
  RequestPermissionResult,
  ToolCallFields,
} from '../acp';

/** Display order: the safe "once" choices first, allow before reject. */
const ORDER: PermissionOptionKind[] = ['allow_once', 'allow_always', 'reject_once', 'reject_always'];

const DEFAULT_LABELS: Record<PermissionOptionKind, string> = {
  allow_once: 'Allow',
  allow_always: 'Always allow',
  reject_once: 'Reject',
  reject_always: 'Always reject',
};

export type ButtonStyle = 'primary' | 'secondary' | 'danger';

export interface PermissionButton {
  optionId: string;
  kind: PermissionOptionKind | 'other';
  label: string;
  style: ButtonStyle;
}

function rank(kind: string): number {
  const i = ORDER.indexOf(kind as PermissionOptionKind);
  return i < 0 ? ORDER.length : i;
}

/** The options as buttons, in display order (stable for equal kinds). */
export function permissionButtons(options: readonly PermissionOption[]): PermissionButton[] {
  return options
    .filter((o) => o && typeof o.optionId === 'string')
    .map((o, i) => ({ o, i }))
    .sort((a, b) => rank(a.o.kind) - rank(b.o.kind) || a.i - b.i)
    .map(({ o }) => {
      const kind = (ORDER as string[]).includes(o.kind) ? o.kind : 'other';
      const label = (o.name && o.name.trim()) || (kind === 'other' ? o.optionId : DEFAULT_LABELS[kind]);
      const style: ButtonStyle = kind === 'allow_once' ? 'primary' : kind === 'reject_always' ? 'danger' : 'secondary';
      return { optionId: o.optionId, kind, label, style };
    });
}

export function selectedOutcome(optionId: string): RequestPermissionResult {
  return { outcome: { outcome: 'selected', optionId } };
}

export function cancelledOutcome(): RequestPermissionResult {
  return { outcome: { outcome: 'cancelled' } };
}

/** Outcome for a choice: an option id, or null/undefined when dismissed. */
export function outcomeFor(
  options: readonly PermissionOption[],
  optionId: string | null | undefined,
): RequestPermissionResult {
  if (optionId && options.some((o) => o.optionId === optionId)) return selectedOutcome(optionId);
  return cancelledOutcome();
}

/** What the past-tense label of a chosen option reads like ("Allowed once"). */
export function resolvedLabel(options: readonly PermissionOption[], optionId: string | null): string {
  if (!optionId) return 'Cancelled';
  const kind = options.find((o) => o.optionId === optionId)?.kind;
  switch (kind) {
    case 'allow_once':
      return 'Allowed once';
    case 'allow_always':
      return 'Always allowed';
    case 'reject_once':
      return 'Rejected';
    case 'reject_always':
      return 'Always rejected';
    default:
      return options.find((o) => o.optionId === optionId)?.name ?? optionId;
  }
}

/** A one-line description of what the tool wants to do. */
export function describeToolCall(call: ToolCallFields): string {
  const title = call.title?.trim();
  if (title) return title;
  const input = call.rawInput as Record<string, unknown> | undefined;
  if (input && typeof input === 'object') {
    if (typeof input.command === 'string') return `Run \`${input.command}\``;
    if (typeof input.path === 'string') return `${call.kind ?? 'use'} ${input.path}`;
  }
  return call.kind ? `A ${call.kind} tool call` : 'A tool call';
}

export interface ModalPrompt {
  message: string;
  detail: string;
  items: { title: string; optionId: string }[];
}

/** The modal fallback used when the chat panel is not visible. */
export function modalPrompt(params: RequestPermissionParams): ModalPrompt {
  const call = params.toolCall ?? { toolCallId: '' };
  const where = (call.locations ?? [])
    .map((l) => (l.line != null ? `${l.path}:${l.line}` : l.path))
    .join('\n');
  const input = call.rawInput as Record<string, unknown> | undefined;
  const command = input && typeof input.command === 'string' ? `$ ${input.command}` : '';
  return {
    message: `agentls wants to: ${describeToolCall(call)}`,
    detail: [command, where].filter(Boolean).join('\n\n'),
    items: permissionButtons(params.options ?? []).map((b) => ({ title: b.label, optionId: b.optionId })),
  };
}
