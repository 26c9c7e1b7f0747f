/**
 * Turns agent updates into VS Code chat response calls for the `@agentls`
 * chat participant. No `vscode` import: the stream is an interface.
 */

import { blockText, type SessionUpdate, type TurnResult } from '../acp';

export interface ChatStreamLike {
  markdown(text: string): void;
  progress(text: string): void;
}

export class ParticipantRenderer {
  private streamed = false;
  private readonly titles = new Map<string, string>();

  constructor(private readonly stream: ChatStreamLike) {}

  onUpdate(update: SessionUpdate): void {
    const u = update as { sessionUpdate: string } & Record<string, unknown>;
    switch (u.sessionUpdate) {
      case 'agent_message_chunk': {
        const text = blockText(u.content as never);
        if (text) {
          this.stream.markdown(text);
          this.streamed = true;
        }
        return;
      }
      case 'tool_call': {
        const id = String(u.toolCallId ?? '');
        const title = typeof u.title === 'string' && u.title ? u.title : 'Working';
        this.titles.set(id, title);
        this.stream.progress(`${title}…`);
        return;
      }
      case 'tool_call_update': {
        const id = String(u.toolCallId ?? '');
        if (typeof u.title === 'string' && u.title) this.titles.set(id, u.title);
        if (u.status === 'failed') this.stream.progress(`${this.titles.get(id) ?? 'A tool call'} failed`);
        return;
      }
      case 'compaction_update':
        if (u.status === 'in_progress') this.stream.progress('Compacting the context…');
        return;
      default:
        return;
    }
  }

  /** After the turn: the final text if nothing streamed; an error message if it failed. */
  finish(result: TurnResult): { errorMessage?: string } {
    if (!this.streamed && typeof result.finalResponse === 'string' && result.finalResponse) {
      this.stream.markdown(result.finalResponse);
      this.streamed = true;
    }
    if (result.failed || result.error) {
      return { errorMessage: result.error?.message ?? 'The agent stopped with an error.' };
    }
    if (result.exitReason === 'budget_exhausted') {
      return { errorMessage: 'The agent reached its iteration limit before finishing.' };
    }
    return {};
  }
}
