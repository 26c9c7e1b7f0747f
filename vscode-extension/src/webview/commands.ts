/**
 * `/command` completion in the prompt box: a `/` at the start of the prompt asks the extension for the
 * slash commands (`commandQuery` → `commandResults`, from the server's `agent/listCommands`: command
 * files, skills, `/memory`, MCP prompts). A picked command becomes `/name ` with its argument hint
 * shown beside it in the list. Browser-only, no `vscode` import.
 */

import type { SlashCommand, ToExtension } from '../protocol';
import { escapeHtml } from './markdown';
import { SuggestMenu } from './menu';
import type { Query } from './menu';

/** The command name being typed: `/` first in the prompt, then no space before the caret. */
export function commandAt(text: string, caret: number): Query | null {
  const head = text.slice(0, caret);
  const match = /^\/([^\s/]*)$/.exec(head);
  return match ? { start: 0, query: match[1] } : null;
}

export class CommandMenu extends SuggestMenu<SlashCommand> {
  protected readonly emptyText = 'No matching command';

  protected find(text: string, caret: number): Query | null {
    return commandAt(text, caret);
  }

  protected ask(query: string): ToExtension {
    return { type: 'commandQuery', query };
  }

  protected inserted(item: SlashCommand): string {
    return `/${item.name} `;
  }

  protected itemHtml(c: SlashCommand): string {
    const hint = c.argumentHint ? ` ${c.argumentHint}` : '';
    return `<span class="mention-name">/${escapeHtml(c.name)}${escapeHtml(hint)}</span><span class="mention-dir">${escapeHtml(c.description)}</span>`;
  }
}
