/**
 * Extension entry point: wires the language client, the chat view, the
 * terminals, the commands and the chat participant together. Logic lives in
 * src/core (tested without VS Code); this file only connects it.
 */

import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AgentUpdateParams, RequestPermissionParams } from './acp';
import { ChatViewProvider, CHAT_VIEW_ID } from './chatView';
import { AgentServer } from './client';
import { ChatController } from './core/controller';
import { modalPrompt } from './core/permissions';
import { buildSelectionPrompt, describeRange } from './core/selection';
import { RESTART_KEYS } from './core/settings';
import { TerminalManager } from './core/terminals';
import { EditorState } from './editorState';
import { AgentParticipant } from './participant';
import { TerminalHost } from './terminalHost';

function workspaceCwd(): string | undefined {
  const active = vscode.window.activeTextEditor?.document.uri;
  const folder = (active && vscode.workspace.getWorkspaceFolder(active)) ?? vscode.workspace.workspaceFolders?.[0];
  return folder?.uri.fsPath;
}

async function askPermissionModal(params: RequestPermissionParams): Promise<string | null> {
  const prompt = modalPrompt(params);
  const choice = await vscode.window.showInformationMessage(
    prompt.message,
    { modal: true, detail: prompt.detail || undefined },
    ...prompt.items,
  );
  return choice?.optionId ?? null;
}

async function openLocation(file: string, line?: number | null): Promise<void> {
  const root = workspaceCwd();
  const abs = path.isAbsolute(file) || !root ? file : path.join(root, file);
  try {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(abs));
    const pos = new vscode.Position(Math.max(0, (line ?? 1) - 1), 0);
    await vscode.window.showTextDocument(doc, { selection: new vscode.Range(pos, pos), preview: true });
  } catch {
    void vscode.window.showWarningMessage(`agentls: cannot open ${file}`);
  }
}

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('agentls', { log: true });
  const terminalHost = new TerminalHost();
  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  status.command = 'agentls.showChat';
  status.text = '$(hubot) agentls';
  status.tooltip = 'Show the agentls chat';
  status.show();

  let participant: AgentParticipant | undefined;
  // Created after the controller, which it tells what the context toggle would send.
  let editorState: EditorState | undefined;

  const controller: ChatController = new ChatController({
    connection: () => server.connection(),
    cwd: workspaceCwd,
    askPermissionModal,
    openLocation: (file, line) => void openLocation(file, line),
    openTerminal: (id) => {
      if (!terminalHost.show(id)) void vscode.window.showInformationMessage('agentls: that terminal has been closed.');
    },
    revealView: () => void view.reveal(),
    onRunningChanged: (running) => {
      status.text = running ? '$(loading~spin) agentls' : '$(hubot) agentls';
      void vscode.commands.executeCommand('setContext', 'agentls.running', running);
    },
    editorContext: () => editorState?.editorContext(),
    findFiles: (query) => editorState?.findFiles(query) ?? Promise.resolve([]),
  });
  editorState = new EditorState((label) => controller.setEditorContext(label));
  context.subscriptions.push(editorState);

  const terminals = new TerminalManager({
    sinkFactory: terminalHost.sinkFactory,
    defaultCwd: workspaceCwd,
    onOutput: (id, out, exit) => controller.onTerminalOutput(id, out, exit),
  });

  const server = new AgentServer(output, {
    onUpdate: (p: AgentUpdateParams) => {
      controller.onUpdate(p);
      participant?.onUpdate(p);
    },
    requestPermission: (params, token) => controller.requestPermission(params, token),
    diagnostics: (params) => editorState?.diagnostics(params) ?? Promise.resolve({ diagnostics: [] }),
    terminals,
    onState: (state, message, model) => {
      controller.setStatus(state, message, model);
      if (state === 'error' || state === 'stopped') status.text = '$(error) agentls';
      else if (!controller.running) status.text = '$(hubot) agentls';
    },
  });

  const view = new ChatViewProvider(context.extensionUri, controller);
  context.subscriptions.push(
    output,
    status,
    terminalHost,
    server,
    { dispose: () => terminals.disposeAll() },
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, view, { webviewOptions: { retainContextWhenHidden: true } }),
  );

  try {
    participant = new AgentParticipant(context.extensionUri, server, workspaceCwd);
    context.subscriptions.push(participant);
  } catch (err) {
    // Chat is unavailable in some VS Code builds (e.g. without Copilot Chat); the panel still works.
    output.info(`Chat participant not registered: ${String(err)}`);
  }

  const reg = (id: string, fn: (...args: unknown[]) => unknown): void => {
    context.subscriptions.push(vscode.commands.registerCommand(id, fn));
  };

  reg('agentls.showChat', () => view.reveal());
  reg('agentls.newSession', async () => {
    await view.reveal();
    await controller.newSession();
  });
  reg('agentls.stop', () => controller.stop());
  reg('agentls.undo', () => controller.undo());
  reg('agentls.compact', async () => {
    const focus = await vscode.window.showInputBox({
      title: 'agentls: Compact context',
      prompt: 'What should the summary focus on? (optional)',
      placeHolder: 'e.g. the failing test and the files touched so far',
    });
    if (focus !== undefined) await controller.compact(focus);
  });
  reg('agentls.restartServer', () => server.restart().catch(() => undefined));
  reg('agentls.showLog', () => output.show());
  reg('agentls.askSelection', async () => {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
      void vscode.window.showInformationMessage('agentls: open a file and select some code first.');
      return;
    }
    const doc = editor.document;
    const sel = editor.selection.isEmpty ? doc.lineAt(editor.selection.active.line).range : editor.selection;
    const text = doc.getText(sel);
    if (!text.trim()) {
      void vscode.window.showInformationMessage('agentls: select some code first.');
      return;
    }
    const question = await vscode.window.showInputBox({
      title: 'agentls: Ask about selection',
      prompt: 'What do you want to know or change?',
      placeHolder: 'e.g. Why does this loop never end?',
    });
    if (question === undefined) return;
    const ctx = {
      question,
      uri: doc.uri.toString(),
      relativePath: vscode.workspace.asRelativePath(doc.uri, false),
      languageId: doc.languageId,
      text,
      range: {
        startLine: sel.start.line,
        startCharacter: sel.start.character,
        endLine: sel.end.line,
        endCharacter: sel.end.character,
      },
    };
    await view.reveal();
    await controller.prompt(buildSelectionPrompt(ctx), {
      text: question.trim() || 'Explain this code.',
      context: describeRange(ctx),
    });
  });

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (!RESTART_KEYS.some((k) => e.affectsConfiguration(`agentls.${k}`))) return;
      const choice = await vscode.window.showInformationMessage(
        'agentls settings changed. Restart the server to apply them?',
        'Restart',
      );
      if (choice === 'Restart') await server.restart().catch(() => undefined);
    }),
  );

  void server.start().catch(() => undefined);
}

export function deactivate(): void {
  // Disposables registered on the context stop the server and the terminals.
}
