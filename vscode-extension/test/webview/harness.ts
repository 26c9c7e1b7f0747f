/**
 * Loads the bundled chat webview (dist/webview.js + media/chat.css, the same
 * HTML shell the extension serves, CSP and nonce included) in headless
 * Chromium via playwright-core, with `acquireVsCodeApi` stubbed to record
 * posted messages. Never downloads a browser: it uses the system Chromium.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { webviewHtml } from '../../src/core/html';
import type { ToExtension, ToWebview } from '../../src/protocol';

export const ROOT = path.resolve(__dirname, '..', '..');
export const ARTIFACTS = path.join(ROOT, 'test-artifacts');

const CANDIDATES = [
  process.env.CHROMIUM_PATH,
  '/usr/lib/chromium/chromium',
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
].filter((p): p is string => !!p);

export function findChromium(): string | undefined {
  return CANDIDATES.find((p) => fs.existsSync(p));
}

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-dev-shm-usage',
];

/** VS Code "Dark Modern" colours, as the workbench injects them into webviews. */
const DARK_THEME = `
html {
  --vscode-font-family: -apple-system, BlinkMacSystemFont, "Segoe WPC", "Segoe UI", "Ubuntu", "Droid Sans", sans-serif;
  --vscode-font-size: 13px;
  --vscode-editor-font-family: "Droid Sans Mono", "monospace", monospace;
  --vscode-editor-font-size: 14px;
  --vscode-foreground: #cccccc;
  --vscode-descriptionForeground: #9d9d9d;
  --vscode-sideBar-background: #181818;
  --vscode-editor-background: #1f1f1f;
  --vscode-editor-foreground: #cccccc;
  --vscode-editorWidget-background: #202020;
  --vscode-widget-border: #313131;
  --vscode-panel-border: #2b2b2b;
  --vscode-focusBorder: #0078d4;
  --vscode-textLink-foreground: #4daafc;
  --vscode-textCodeBlock-background: #2b2b2b;
  --vscode-textPreformat-foreground: #d0d0d0;
  --vscode-textBlockQuote-border: #616161;
  --vscode-button-background: #0078d4;
  --vscode-button-foreground: #ffffff;
  --vscode-button-hoverBackground: #026ec1;
  --vscode-button-secondaryBackground: #313131;
  --vscode-button-secondaryForeground: #cccccc;
  --vscode-button-secondaryHoverBackground: #3c3c3c;
  --vscode-input-background: #313131;
  --vscode-input-foreground: #cccccc;
  --vscode-input-border: #3c3c3c;
  --vscode-input-placeholderForeground: #989898;
  --vscode-icon-foreground: #cccccc;
  --vscode-toolbar-hoverBackground: rgba(90, 93, 94, 0.31);
  --vscode-list-hoverBackground: #2a2d2e;
  --vscode-list-inactiveSelectionBackground: #37373d;
  --vscode-quickInput-background: #222222;
  --vscode-widget-shadow: rgba(0, 0, 0, 0.36);
  --vscode-progressBar-background: #0078d4;
  --vscode-testing-iconPassed: #73c991;
  --vscode-errorForeground: #f85149;
  --vscode-editorWarning-foreground: #cca700;
  --vscode-inputValidation-errorBackground: #5a1d1d;
  --vscode-inputValidation-errorBorder: #be1100;
  --vscode-inputValidation-warningBorder: #b89500;
  --vscode-diffEditor-insertedLineBackground: rgba(155, 185, 85, 0.2);
  --vscode-diffEditor-removedLineBackground: rgba(255, 0, 0, 0.2);
  --vscode-gitDecoration-addedResourceForeground: #81b88b;
  --vscode-gitDecoration-deletedResourceForeground: #c74e39;
  --vscode-editorLineNumber-foreground: #6e7681;
  --vscode-terminal-background: #181818;
  --vscode-terminal-foreground: #cccccc;
  --vscode-chat-requestBackground: rgba(0, 120, 212, 0.16);
}
`;

/** Writes the test page next to the artifacts and returns its file URL. */
export function writeTestPage(): string {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const script = path.join(ROOT, 'dist', 'webview.js');
  if (!fs.existsSync(script)) throw new Error('dist/webview.js is missing: run `npm run build` first.');
  fs.writeFileSync(path.join(ARTIFACTS, 'theme-dark.css'), DARK_THEME);
  let html = webviewHtml({
    cspSource: 'file:',
    scriptUri: pathToFileURL(script).href,
    styleUri: pathToFileURL(path.join(ROOT, 'media', 'chat.css')).href,
    bodyClass: 'vscode-dark',
  });
  // The workbench injects theme variables before the page's own styles.
  html = html.replace('<link rel="stylesheet"', `<link rel="stylesheet" href="theme-dark.css">\n<link rel="stylesheet"`);
  const file = path.join(ARTIFACTS, 'chat.html');
  fs.writeFileSync(file, html);
  return pathToFileURL(file).href;
}

/** Stands in for the webview API VS Code injects; records what the page posts. */
const VSCODE_API_STUB = `
  window.__posted = [];
  window.__state = undefined;
  (function () {
    var acquired = false;
    window.acquireVsCodeApi = function () {
      if (acquired) throw new Error('acquireVsCodeApi called twice');
      acquired = true;
      return {
        postMessage: function (m) { window.__posted.push(JSON.parse(JSON.stringify(m))); },
        getState: function () { return window.__state; },
        setState: function (s) { window.__state = s; },
      };
    };
  })();
`;

export interface ChatPage {
  page: Page;
  /** Deliver extension → webview messages (like webview.postMessage). */
  send(...msgs: ToWebview[]): Promise<void>;
  /** Messages the webview posted (vscode.postMessage), in order. */
  posted(): Promise<ToExtension[]>;
  clearPosted(): Promise<void>;
  /** Errors thrown inside the page (should stay empty). */
  errors: string[];
}

export async function openChat(browser: Browser, url: string, viewport = { width: 420, height: 900 }): Promise<ChatPage> {
  const page = await browser.newPage({ viewport });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  // A string, not a function: the test transpiler may wrap functions in helpers the page lacks.
  await page.addInitScript(VSCODE_API_STUB);
  await page.goto(url);
  await page.waitForSelector('.app');
  return {
    page,
    errors,
    async send(...msgs) {
      await page.evaluate((list) => {
        for (const m of list) window.dispatchEvent(new MessageEvent('message', { data: m }));
      }, msgs);
      // Rendering is batched per animation frame.
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    },
    posted: () => page.evaluate(() => (window as unknown as { __posted: ToExtension[] }).__posted),
    clearPosted: () => page.evaluate(() => void ((window as unknown as { __posted: unknown[] }).__posted = [])),
  };
}

export interface TurnFixture {
  sessionId: string;
  prompt: string;
  permission: { sessionId: string; toolCall: never; options: never };
  events: (
    | { sessionId: string; update: never }
    | { permission: true }
    | { terminalOutput: { terminalId: string; output: string; exitCode?: number | null } }
  )[];
  result: never;
}

export function loadFixture(): TurnFixture {
  return JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'turn-updates.json'), 'utf8')) as TurnFixture;
}

/** The fixture as the extension would post it to the webview. */
export function fixtureMessages(f: TurnFixture, upTo = Infinity): ToWebview[] {
  const out: ToWebview[] = [];
  for (const e of f.events.slice(0, upTo)) {
    if ('permission' in e) out.push({ type: 'permissionRequest', requestId: 'perm-1', toolCall: f.permission.toolCall, options: f.permission.options });
    else if ('terminalOutput' in e) out.push({ type: 'terminalOutput', ...e.terminalOutput });
    else out.push({ type: 'update', sessionId: e.sessionId, update: e.update });
  }
  return out;
}
