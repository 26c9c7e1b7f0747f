/**
 * `@file` completion in the prompt box: typing `@` and a few letters asks the extension for workspace
 * files (`mentionQuery` → `mentionResults`); ↑/↓ move, Enter or Tab picks, Esc closes. A picked file
 * becomes `@path ` in the text and is remembered, so the prompt carries it as a `resource_link` the
 * server reads and inlines. Browser-only, no `vscode` import.
 */

import type { Mention } from '../core/context';
import { mentionAt } from '../core/context';
import type { ToExtension } from '../protocol';
import { escapeHtml } from './markdown';

export class MentionMenu {
  private items: Mention[] = [];
  private active = 0;
  private query: { start: number; query: string } | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private picked: Mention[] = [];

  constructor(
    private readonly input: HTMLTextAreaElement,
    private readonly list: HTMLElement,
    private readonly post: (msg: ToExtension) => void,
    private readonly debounceMs = 60,
  ) {
    // Capture: runs before the prompt box's own Enter-to-send handler.
    input.addEventListener('keydown', (e) => this.onKey(e), { capture: true });
    input.addEventListener('input', () => this.onInput());
    input.addEventListener('blur', () => setTimeout(() => this.close(), 150));
    list.addEventListener('mousedown', (e) => {
      const item = (e.target as HTMLElement).closest<HTMLElement>('[data-index]');
      if (!item) return;
      e.preventDefault();
      this.pick(Number(item.dataset.index));
    });
  }

  get open(): boolean {
    return !this.list.hidden;
  }

  /** The files picked whose `@path` is still in the text; forgets them (the prompt was sent). */
  take(): Mention[] {
    const out = this.picked;
    this.picked = [];
    return out;
  }

  /** `mentionResults` from the extension: shown when it answers the query still being typed. */
  results(query: string, items: Mention[]): void {
    if (!this.query || this.query.query !== query) return;
    this.items = items;
    this.active = 0;
    this.render();
  }

  private onInput(): void {
    const found = mentionAt(this.input.value, this.input.selectionStart ?? this.input.value.length);
    this.query = found;
    clearTimeout(this.timer);
    if (!found) {
      this.close();
      return;
    }
    this.timer = setTimeout(() => this.post({ type: 'mentionQuery', query: found.query }), this.debounceMs);
  }

  private onKey(e: KeyboardEvent): void {
    if (!this.open || this.items.length === 0) return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      this.active = (this.active + (e.key === 'ArrowDown' ? 1 : this.items.length - 1)) % this.items.length;
      this.render();
    } else if ((e.key === 'Enter' && !e.shiftKey) || e.key === 'Tab') {
      this.pick(this.active);
    } else if (e.key === 'Escape') {
      this.close();
    } else {
      return;
    }
    e.preventDefault();
    e.stopImmediatePropagation();
  }

  private pick(index: number): void {
    const item = this.items[index];
    const q = this.query;
    if (!item || !q) return;
    const text = this.input.value;
    const end = q.start + 1 + q.query.length;
    const inserted = `@${item.path} `;
    this.input.value = text.slice(0, q.start) + inserted + text.slice(end);
    const caret = q.start + inserted.length;
    this.input.setSelectionRange(caret, caret);
    if (!this.picked.some((m) => m.uri === item.uri)) this.picked.push(item);
    this.close();
    this.input.dispatchEvent(new Event('input'));
    this.input.focus();
  }

  private close(): void {
    this.list.hidden = true;
    this.items = [];
  }

  private render(): void {
    if (this.items.length === 0) {
      this.list.hidden = false;
      this.list.innerHTML = '<li class="mention-empty">No matching file</li>';
      return;
    }
    this.list.innerHTML = this.items
      .map((m, i) => {
        const slash = m.path.lastIndexOf('/');
        const name = m.path.slice(slash + 1);
        const dir = slash > 0 ? m.path.slice(0, slash) : '';
        return (
          `<li class="mention-item${i === this.active ? ' active' : ''}" role="option" aria-selected="${i === this.active}" data-index="${i}">` +
          `<span class="mention-name">${escapeHtml(name)}</span><span class="mention-dir">${escapeHtml(dir)}</span></li>`
        );
      })
      .join('');
    this.list.hidden = false;
  }
}
