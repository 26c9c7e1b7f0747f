/** `@agentls` in VS Code's built-in chat: runs `agent/turn` and streams the answer. */

import * as vscode from 'vscode';
import { Methods, type AgentUpdateParams, type SessionUpdate, type TurnResult } from './acp';
import { ParticipantRenderer } from './core/participantStream';
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
        const result = await this.server.request<TurnResult>(Methods.turn, { sessionId, prompt: request.prompt }, token);
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
