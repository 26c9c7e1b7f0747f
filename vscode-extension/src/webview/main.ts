/**
 * Webview entry point (bundled as an IIFE for the browser). Wires the VS Code
 * webview API to `ChatApp`; everything else lives in render.ts.
 */

import type { ToExtension, ToWebview } from '../protocol';
import { ChatApp, type PersistedState } from './render';

interface VsCodeApi {
  postMessage(msg: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const root = document.getElementById('app') ?? document.body;

const app = new ChatApp(root, {
  post: (msg: ToExtension) => vscode.postMessage(msg),
  getState: () => vscode.getState() as PersistedState | undefined,
  setState: (s) => vscode.setState(s),
});

window.addEventListener('message', (event: MessageEvent) => {
  const msg = event.data as ToWebview | undefined;
  if (msg && typeof msg === 'object' && typeof msg.type === 'string') app.receive(msg);
});

// Exposed for debugging in the webview developer tools.
(window as unknown as { agentlsChat: ChatApp }).agentlsChat = app;

vscode.postMessage({ type: 'ready' } satisfies ToExtension);
