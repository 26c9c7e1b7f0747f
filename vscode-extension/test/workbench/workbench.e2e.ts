/**
 * The packaged extension in real VS Code: code-server's workbench in headless Chromium, the real
 * `agentls lsp` started by the extension, and the scripted provider as the model.
 *
 * One workbench for the whole file; the tests run in order, as a user would: open the chat from the
 * command palette, run a turn that asks permission and edits a file, then undo it. On a failure the
 * page's screenshot, the code-server log and the provider's recorded requests are kept in
 * test-artifacts/vscode-workbench/ at the repository root.
 *
 * Run: `npm run test:workbench` (it packages the .vsix first, or takes $AGENTLS_VSIX).
 * AGENTLS_REAL_EDITORS=skip skips it, =require makes a missing code-server or Chromium a failure (CI).
 */

import assert from 'node:assert/strict';
import { type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium, type Browser, type Frame, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, findChromium } from '../webview/harness';
import { EXT_ROOT, PYTHON, agentlsUnavailable, sleep, startScriptedProvider, type Reply, type Urls } from '../wire/agentls';
import { ARTIFACTS, findCodeServer, packageVsix, realEditorsMode, startCodeServer, type CodeServer } from './codeServer';

const KEY_ENV = 'AGENTLS_WORKBENCH_TEST_KEY';
const ORIGINAL = 'def greet(name):\n    return name\n';
const EDITED = 'def greet(name):\n    return f"Hello, {name}!"\n';
const WAIT = 120_000; // two shared cores, a browser, VS Code, its extension host and the server
// An MCP server for every session (docs/mcp.md): the lab server of tests/mcp_client, from the user settings.
const LAB = path.join(EXT_ROOT, '..', 'tests', 'mcp_client', 'servers', 'lab.py');

/** Poll `check` until it returns a value (not undefined) or `ms` passes. */
async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined, ms = WAIT): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
    await sleep(250);
  }
}

describe('real VS Code: the packaged extension in code-server', function () {
  this.timeout(15 * 60_000);
  let provider: ChildProcess | undefined;
  let urls: Urls;
  let server: CodeServer | undefined;
  let browser: Browser | undefined;
  let page: Page;
  const consoleErrors: string[] = [];

  const skipOrFail = (ctx: Mocha.Context, why: string): never => {
    if (realEditorsMode() === 'require') throw new Error(`real VS Code suite required (AGENTLS_REAL_EDITORS=require): ${why}`);
    console.log(`    [skip] ${why}`);
    ctx.skip();
  };

  before(async function () {
    if (realEditorsMode() === 'skip') {
      console.log('    [skip] AGENTLS_REAL_EDITORS=skip: the real VS Code suite is skipped');
      this.skip();
    }
    const chromiumPath = findChromium();
    if (!chromiumPath) skipOrFail(this, 'no Chromium (apt-get install chromium, or set CHROMIUM_PATH)');
    const unavailable = agentlsUnavailable();
    if (unavailable) skipOrFail(this, unavailable);
    const vsix = packageVsix(EXT_ROOT);
    if (!vsix.path) throw new Error(`no .vsix to install: ${vsix.why}`);
    const cs = findCodeServer();
    if (!cs.path) skipOrFail(this, `no code-server: ${cs.why}`);

    const dataEnv = { [KEY_ENV]: 'sk-workbench-test', PYTHONUNBUFFERED: '1' };
    ({ child: provider, urls } = await startScriptedProvider({ ...process.env, ...dataEnv }));
    const bin = path.dirname(PYTHON);
    const agentls = path.join(bin, 'agentls');
    server = await startCodeServer({
      codeServer: cs.path!,
      vsix: vsix.path,
      files: { 'greet.py': ORIGINAL },
      settings: {
        ...(fs.existsSync(agentls)
          ? { 'agentls.server.path': agentls }
          : { 'agentls.server.path': PYTHON, 'agentls.server.args': ['-m', 'agentls.server', 'lsp'] }),
        'agentls.model': 'scripted',
        'agentls.provider': 'openai',
        'agentls.baseUrl': urls.openai_url,
        'agentls.apiKeyEnv': KEY_ENV,
        'agentls.approval': 'ask',
        'agentls.mcpServers': { lab: { command: PYTHON, args: [LAB, 'ok'] } },
        'workbench.startupEditor': 'none',
        'workbench.tips.enabled': false,
        'security.workspace.trust.enabled': false,
        'telemetry.telemetryLevel': 'off',
        'extensions.autoUpdate': false,
        'extensions.autoCheckUpdates': false,
        'update.mode': 'none',
        'chat.disableAIFeatures': true,
      },
      env: { ...dataEnv, AGENTLS_CONFIG: '/nonexistent/agentls.toml' },
    });

    browser = await chromium.launch({ executablePath: chromiumPath!, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('console', (m) => void (m.type() === 'error' && consoleErrors.push(m.text())));
    await page.goto(`${server.url}/?folder=${encodeURIComponent(server.workspace)}`);
    await page.waitForSelector('.monaco-workbench', { timeout: WAIT });
  });

  afterEach(async function () {
    if (this.currentTest?.state !== 'failed') return;
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    const slug = (this.currentTest.title || 'test').replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
    await page?.screenshot({ path: path.join(ARTIFACTS, `${slug}.png`) }).catch(() => undefined);
    if (server) fs.writeFileSync(path.join(ARTIFACTS, 'code-server.log'), server.log());
    fs.writeFileSync(path.join(ARTIFACTS, 'console-errors.txt'), consoleErrors.join('\n'));
    if (urls) {
      const r = await fetch(`${urls.url}/_scripted/requests`).then((x) => x.text(), () => '');
      fs.writeFileSync(path.join(ARTIFACTS, 'provider-requests.json'), r);
    }
    console.log(`    artifacts kept in ${ARTIFACTS}`);
  });

  after(async () => {
    await browser?.close().catch(() => undefined);
    await server?.stop();
    provider?.kill('SIGTERM');
  });

  const push = async (replies: Reply[]): Promise<void> => {
    const r = await fetch(`${urls.url}/_scripted/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ replies }),
    });
    assert.equal(r.status, 200, await r.text());
  };

  /** The chat webview's frame (VS Code nests it in two iframes; playwright sees through both). */
  const chat = (): Promise<Frame> =>
    until('the agentls chat webview', async () => {
      for (const f of page.frames()) {
        if (f.isDetached() || !f.url().includes('/webview/')) continue;
        if (await f.$('textarea.prompt')) return f;
      }
      return undefined;
    });

  /** Run a command from the palette (F1). The palette lists what is registered when it opens, so it is
   * opened again until the command shows up. */
  const runCommand = async (title: string): Promise<void> => {
    const input = page.locator('.quick-input-widget input');
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title });
    await until(`"${title}" in the command palette`, async () => {
      if (!(await input.isVisible())) await page.keyboard.press('F1');
      await input.waitFor({ timeout: WAIT });
      await input.fill(`>${title}`);
      try {
        await row.first().waitFor({ timeout: 5_000 });
        return true;
      } catch {
        await page.keyboard.press('Escape');
        return undefined;
      }
    });
    await row.first().click();
  };

  /** Quick Open (F1, then a file name instead of a command). */
  const openInEditor = async (name: string): Promise<void> => {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ timeout: WAIT });
    await input.fill(name);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor({ timeout: WAIT });
    await page.keyboard.press('Enter');
    await page.locator(`.tabs-container .tab[aria-label^="${name}"]`).first().waitFor({ timeout: WAIT });
  };

  /** The visible text of the active editor (Monaco renders spaces as no-break spaces). */
  const editorText = async (): Promise<string> =>
    ((await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().textContent()) ?? '').replace(/\u00a0/g, ' ');

  const diskText = (): string => fs.readFileSync(path.join(server!.workspace, 'greet.py'), 'utf8');

  it('opens "agentls: Show chat" from the command palette and starts the server', async () => {
    // The extension runs in code-server's (remote) extension host; the workbench knows its contributions
    // once that host has reported them: the agentls view container shows in the activity bar.
    await page.locator('.part.activitybar [aria-label^="agentls"]').first().waitFor({ timeout: WAIT });
    await runCommand('agentls: Show chat');
    const frame = await chat();
    await frame.locator('.status-dot[data-state="ready"]').waitFor({ timeout: WAIT });
    assert.equal(await frame.locator('.notice.level-error').count(), 0, 'no error card');
  });

  it('runs a turn: asks permission, applies the edit, shows the diff card, writes the file', async () => {
    await push([
      { tool_calls: [{ name: 'read_file', arguments: { path: 'greet.py' } }] },  // an edit needs a read first
      { tool_calls: [{ name: 'edit_file', arguments: { path: 'greet.py', old_string: '    return name\n', new_string: '    return f"Hello, {name}!"\n' } }] },
      { content: 'greet() now says hello.' },
    ]);
    const frame = await chat();
    const prompt = frame.locator('textarea.prompt');
    await prompt.click();
    await prompt.fill('Make greet say hello');
    await prompt.press('Enter');

    const allow = frame.locator('.perm-actions button[data-kind="allow_once"]');
    await allow.waitFor({ timeout: WAIT });
    assert.match((await frame.locator('.perm-title').last().textContent()) ?? '', /greet\.py/);
    assert.equal(diskText(), ORIGINAL, 'nothing is written before the user allows it');
    await allow.click();

    const card = frame.locator('details.tool[data-kind="edit"][data-status="completed"]');
    await card.waitFor({ timeout: WAIT });
    const diff = card.locator('.diff');
    assert.equal((await diff.locator('.diff-head .file-link').textContent())?.trim(), 'greet.py');
    assert.equal((await diff.locator('.diff-stat').textContent())?.trim(), '+1 −1');
    assert.deepEqual(await diff.locator('tr.del .code').allTextContents(), ['−    return name']);
    assert.deepEqual(await diff.locator('tr.add .code').allTextContents(), ['+    return f"Hello, {name}!"']);
    assert.equal(await frame.locator('.perm-result[data-kind="allow_once"]').count(), 1, 'the card says "Allowed once"');
    await frame.locator('.msg.agent', { hasText: 'greet() now says hello.' }).waitFor({ timeout: WAIT });
    // agentls.saveEdits (default on): the edit went through VS Code's buffer and was saved to disk.
    await until('greet.py to be saved with the edit', () => (diskText() === EDITED ? true : undefined));
    await openInEditor('greet.py');
    await until('the editor to show the edit', async () => ((await editorText()).includes('return f"Hello, {name}!"') ? true : undefined));
  });

  it('undoes the turn: the file on disk is restored', async () => {
    const frame = await chat();
    await until('the turn to end (Stop disabled)', async () =>
      (await frame.locator('button[data-action="stop"]').isDisabled()) ? true : undefined,
    );
    await frame.locator('button[data-action="undo"]').click();
    await frame.locator('.notice-text', { hasText: 'Undid the last turn' }).waitFor({ timeout: WAIT });
    await until('greet.py to be restored on disk', () => (diskText() === ORIGINAL ? true : undefined));
    await until('the editor to show the original', async () => {
      const text = await editorText();
      return text.includes('return name') && !text.includes('Hello') ? true : undefined;
    });
  });

  it("shows the session's MCP server, and its tool is asked for, run and shown", async () => {
    const frame = await chat();
    const chip = frame.locator('.mcp-servers .mcp-server[data-state="ready"]', { hasText: 'lab' });
    await chip.waitFor({ timeout: WAIT });
    assert.match((await chip.textContent()) ?? '', /lab · \d+ tools/);
    await until('the undo turn to end', async () => ((await frame.locator('button[data-action="stop"]').isDisabled()) ? true : undefined));
    await push([{ tool_calls: [{ name: 'mcp__lab__echo', arguments: { text: 'from VS Code' } }] }, { content: 'The lab server echoed it.' }]);
    const prompt = frame.locator('textarea.prompt');
    await prompt.click();
    await prompt.fill('Echo through the lab server');
    await prompt.press('Enter');
    const allow = frame.locator('.perm-actions button[data-kind="allow_once"]');
    await allow.waitFor({ timeout: WAIT });
    assert.match((await frame.locator('.perm-title').last().textContent()) ?? '', /lab: echo/);
    await allow.click();
    const card = frame.locator('details.tool[data-status="completed"]', { hasText: 'lab: echo' });
    await card.waitFor({ timeout: WAIT });
    await frame.locator('.msg.agent', { hasText: 'The lab server echoed it.' }).waitFor({ timeout: WAIT });
    const sent = await fetch(`${urls.url}/_scripted/requests`).then((r) => r.json() as Promise<{ requests: { body: { messages: { role: string; content: unknown }[] } }[] }>);
    const results = sent.requests.flatMap((r) => r.body.messages.filter((m) => m.role === 'tool').map((m) => String(m.content)));
    assert.ok(results.includes('echo: from VS Code'), 'the model read the MCP result');
  });
});
