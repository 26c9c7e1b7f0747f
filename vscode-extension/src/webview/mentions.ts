/**
 * `@file` completion in the prompt box: typing `@` and a few letters asks the extension for workspace
 * files (`mentionQuery` → `mentionResults`); ↑/↓ move, Enter or Tab picks, Esc closes (`menu.ts`). A
 * picked file becomes `@path ` in the text and is remembered, so the prompt carries it as a
 * `resource_link` the server reads and inlines. Browser-only, no `vscode` import.
 */

import type { Mention } from '../core/context';
import { mentionAt } from '../core/context';
import type { ToExtension } from '../protocol';
import { escapeHtml } from './markdown';
import { SuggestMenu } from './menu';
import type { Query } from './menu';

export class MentionMenu extends SuggestMenu<Mention> {
  protected readonly emptyText = 'No matching file';
  private chosen: Mention[] = [];

  /** The files picked whose `@path` is still in the text; forgets them (the prompt was sent). */
  take(): Mention[] {
    const out = this.chosen;
    this.chosen = [];
    return out;
  }

  protected find(text: string, caret: number): Query | null {
    return mentionAt(text, caret);
  }

  protected ask(query: string): ToExtension {
    return { type: 'mentionQuery', query };
  }

  protected inserted(item: Mention): string {
    return `@${item.path} `;
  }

  protected override picked(item: Mention): void {
    if (!this.chosen.some((m) => m.uri === item.uri)) this.chosen.push(item);
  }

  protected itemHtml(m: Mention): string {
    const slash = m.path.lastIndexOf('/');
    const name = m.path.slice(slash + 1);
    const dir = slash > 0 ? m.path.slice(0, slash) : '';
    return `<span class="mention-name">${escapeHtml(name)}</span><span class="mention-dir">${escapeHtml(dir)}</span>`;
  }
}
