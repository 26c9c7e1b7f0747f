/** The sidebar chat view: hosts the webview and forwards messages to the controller. */

import * as vscode from 'vscode';
import type { ChatController, ChatViewPort } from './core/controller';
import { webviewHtml } from './core/html';
import { isToExtension, type ToWebview } from './protocol';

export const CHAT_VIEW_ID = 'agentls.chat';

export class ChatViewProvider implements vscode.WebviewViewProvider {
  private view: vscode.WebviewView | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: ChatController,
  ) {}

  get visible(): boolean {
    return !!this.view?.visible;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist, media] };
    view.webview.html = webviewHtml({
      cspSource: view.webview.cspSource,
      scriptUri: view.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString(),
      styleUri: view.webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.css')).toString(),
    });
    const port: ChatViewPort = {
      post: (msg: ToWebview) => void view.webview.postMessage(msg),
      isVisible: () => view.visible,
    };
    this.controller.attachView(port);
    view.webview.onDidReceiveMessage((msg: unknown) => {
      if (isToExtension(msg)) void this.controller.handleMessage(msg);
    });
    view.onDidDispose(() => {
      this.controller.detachView(port);
      if (this.view === view) this.view = undefined;
    });
  }

  /** Show the chat view (resolving it if needed). */
  async reveal(): Promise<void> {
    if (this.view) this.view.show(true);
    else await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
  }

  post(msg: ToWebview): void {
    void this.view?.webview.postMessage(msg);
  }
}
