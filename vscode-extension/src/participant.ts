/** `@agentls` in VS Code's built-in chat: runs `agent/turn` and streams the answer. */

import * as vscode from 'vscode';
import { Methods, type AgentUpdateParams, type ContentBlock, type SessionUpdate, type TurnResult } from './acp';
import { ParticipantRenderer } from './core/participantStream';
import { mimeTypeFor } from './core/selection';
import type { AgentServer } from './client';

export class AgentParticipant implements vscode.Disposable {
  private readonly listeners = new Map<string, (u: SessionUpdate) => void>();
  private sessionId: string | undefined;
  private readonly participant: vscode.ChatParticipant;

  constructor(
    extensionUri: vscode.Uri,
    private readonly server: AgentServer,
    private readonly cwd: () => string | undefined,
  ) {
    this.participant = vscode.chat.createChatParticipant('agentls.agent', (req, ctx, stream, token) =>
      this.handle(req, ctx, stream, token),
    );
    this.participant.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'icon.png');
  }

  /** Called for every `agent/update`. */
  onUpdate(params: AgentUpdateParams): void {
    this.listeners.get(params?.sessionId)?.(params.update);
  }

  private async handle(
    request: vscode.ChatRequest,
    context: vscode.ChatContext,
    stream: vscode.ChatResponseStream,
    token: vscode.CancellationToken,
  ): Promise<vscode.ChatResult> {
    try {
      // A new chat conversation gets a new agent session.
      if (!this.sessionId || context.history.length === 0) {
        const cwd = this.cwd();
        const r = await this.server.request<{ sessionId: string }>(Methods.newSession, cwd ? { cwd } : {}, token);
        this.sessionId = r.sessionId;
      }
      const sessionId = this.sessionId;
      const renderer = new ParticipantRenderer(stream);
      this.listeners.set(sessionId, (u) => renderer.onUpdate(u));
      try {
        const prompt = await promptWithReferences(request);
        const result = await this.server.request<TurnResult>(Methods.turn, { sessionId, prompt }, token);
        const { errorMessage } = renderer.finish(result);
        return errorMessage ? { errorDetails: { message: errorMessage } } : {};
      } finally {
        this.listeners.delete(sessionId);
      }
    } catch (err) {
      if (token.isCancellationRequested) return {};
      const message = err instanceof Error ? err.message : String(err);
      return { errorDetails: { message: `agentls: ${message}` } };
    }
  }

  dispose(): void {
    this.participant.dispose();
  }
}

/** Files larger than this are sent as links, not inline text. */
const MAX_INLINE_CHARS = 200_000;

/** The prompt text, plus `#file` / selection references as `resource` blocks. */
async function promptWithReferences(request: vscode.ChatRequest): Promise<string | ContentBlock[]> {
  const blocks: ContentBlock[] = [];
  const notes: string[] = [];
  for (const ref of request.references) {
    const value = ref.value;
    const uri = value instanceof vscode.Uri ? value : value instanceof vscode.Location ? value.uri : undefined;
    if (!uri) continue;
    const name = vscode.workspace.asRelativePath(uri, false);
    try {
      const doc = await vscode.workspace.openTextDocument(uri);
      const range = value instanceof vscode.Location ? value.range : undefined;
      const text = range ? doc.getText(range) : doc.getText();
      if (text.length > MAX_INLINE_CHARS) {
        blocks.push({ type: 'resource_link', uri: uri.toString(), name });
        continue;
      }
      blocks.push({ type: 'resource', resource: { uri: uri.toString(), text, mimeType: mimeTypeFor(doc.languageId) } });
      if (range) notes.push(`${name} lines ${range.start.line + 1}–${range.end.line + 1}`);
    } catch {
      blocks.push({ type: 'resource_link', uri: uri.toString(), name });
    }
  }
  if (!blocks.length) return request.prompt;
  const text = notes.length ? `${request.prompt}\n\nSelections: ${notes.join(', ')}.` : request.prompt;
  return [{ type: 'text', text }, ...blocks];
}
