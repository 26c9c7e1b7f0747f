/**
 * The chat webview's HTML shell, with a Content-Security-Policy that only lets
 * the nonce'd bundle run. No `vscode` import: the browser tests load the same
 * page from disk.
 */

import { randomBytes } from 'node:crypto';

export interface WebviewHtmlOptions {
  /** `webview.cspSource` (or the file origin in tests). */
  cspSource: string;
  scriptUri: string;
  styleUri: string;
  nonce?: string;
  /** Extra `<body>` classes (the tests set a theme class). */
  bodyClass?: string;
}

export function makeNonce(): string {
  return randomBytes(18).toString('base64').replace(/[^A-Za-z0-9]/g, '');
}

const attr = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function webviewHtml(o: WebviewHtmlOptions): string {
  const nonce = o.nonce ?? makeNonce();
  const csp = [
    "default-src 'none'",
    `img-src ${o.cspSource} data:`,
    `style-src ${o.cspSource}`,
    `font-src ${o.cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${attr(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${attr(o.styleUri)}">
<title>agentls</title>
</head>
<body${o.bodyClass ? ` class="${attr(o.bodyClass)}"` : ''}>
<div id="app"></div>
<script nonce="${nonce}" src="${attr(o.scriptUri)}"></script>
</body>
</html>
`;
}
