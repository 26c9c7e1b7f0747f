/**
 * A completion menu over the prompt box, shared by `@file` mentions and `/command`s: typing asks the
 * extension (debounced) for items matching what is being typed; ↑/↓ move, Enter or Tab picks, Esc
 * closes. A subclass says what is being completed (`find`), how an item looks and what picking it
 * writes. Browser-only, no `vscode` import.
 */

import type { ToExtension } from '../protocol';

export interface Query {
  start: number; // where the typed trigger (`@`, `/`) is
  query: string; // what follows it, up to the caret
}

export abstract class SuggestMenu<T> {
  protected items: T[] = [];
  protected active = 0;
  protected query: Query | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    protected readonly input: HTMLTextAreaElement,
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

  /** What is being completed at the caret, or null. */
  protected abstract find(text: string, caret: number): Query | null;
  /** The message that asks the extension for items. */
  protected abstract ask(query: string): ToExtension;
  /** The inner HTML of one item. */
  protected abstract itemHtml(item: T): string;
  /** The text that replaces the trigger and the query. */
  protected abstract inserted(item: T): string;
  protected abstract readonly emptyText: string;

  get open(): boolean {
    return !this.list.hidden;
  }

  /** The extension's answer: shown when it answers the query still being typed. */
  results(query: string, items: T[]): void {
    if (!this.query || this.query.query !== query) return;
    this.items = items;
    this.active = 0;
    this.render();
  }

  protected picked(_item: T): void {}

  private onInput(): void {
    const found = this.find(this.input.value, this.input.selectionStart ?? this.input.value.length);
    this.query = found;
    clearTimeout(this.timer);
    if (!found) {
      this.close();
      return;
    }
    this.timer = setTimeout(() => this.post(this.ask(found.query)), this.debounceMs);
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
    const inserted = this.inserted(item);
    this.input.value = text.slice(0, q.start) + inserted + text.slice(end);
    const caret = q.start + inserted.length;
    this.input.setSelectionRange(caret, caret);
    this.picked(item);
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
      this.list.innerHTML = `<li class="mention-empty">${this.emptyText}</li>`;
      return;
    }
    this.list.innerHTML = this.items
      .map(
        (item, i) =>
          `<li class="mention-item${i === this.active ? ' active' : ''}" role="option" aria-selected="${i === this.active}" data-index="${i}">` +
          `${this.itemHtml(item)}</li>`,
      )
      .join('');
    this.list.hidden = false;
  }
}
