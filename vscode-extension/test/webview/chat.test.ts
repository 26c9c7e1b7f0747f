import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import type { SessionUpdate, TurnResult } from '../../src/acp';
import type { ToWebview } from '../../src/protocol';
import { ARTIFACTS, CHROMIUM_ARGS, ROOT, findChromium, fixtureMessages, loadFixture, openChat, writeTestPage, type ChatPage } from './harness';

describe('chat webview (headless Chromium)', function () {
  this.timeout(30_000);
  let browser: Browser | undefined;
  let url = '';
  const fixture = loadFixture();
  const start: ToWebview[] = [
    { type: 'status', state: 'ready', model: 'gpt-4.1' },
    { type: 'reset', sessionId: fixture.sessionId, title: null },
    { type: 'userMessage', text: fixture.prompt },
    { type: 'turnState', running: true },
  ];

  before(async function () {
    const executablePath = findChromium();
    if (!executablePath) {
      console.log('    [skip] No Chromium found (set CHROMIUM_PATH or `apt-get install chromium`): webview tests skipped.');
      this.skip();
    }
    url = writeTestPage();
    // playwright gives each launch a fresh, empty profile directory.
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  });

  after(async () => {
    await browser?.close();
  });

  let chat: ChatPage;
  beforeEach(async () => {
    chat = await openChat(browser!, url);
  });
  afterEach(async () => {
    assert.deepEqual(chat.errors, [], 'no errors in the page');
    await chat.page.close();
  });

  it('posts ready on load and shows the empty state', async () => {
    assert.deepEqual(await chat.posted(), [{ type: 'ready' }]);
    assert.equal(await chat.page.isVisible('.empty'), true);
    assert.equal(await chat.page.isDisabled('[data-action="undo"]'), true, 'nothing to undo without a session');
    await chat.send({ type: 'session', sessionId: 'S1' });
    assert.equal(await chat.page.isEnabled('[data-action="undo"]'), true);
    assert.equal(await chat.page.isEnabled('[data-action="compact"]'), true);
  });

  it('concatenates streamed chunks into one message', async () => {
    await chat.send(...start, ...fixtureMessages(fixture));
    const agents = await chat.page.$$eval('.msg.agent', (els) => els.map((e) => e.textContent ?? ''));
    assert.equal(agents.length, 2);
    assert.equal(agents[0], "I'll start by reading config.py to see how ports are parsed.");
    assert.match(agents[1]!, /^Done\. parse_port now:/);
    assert.equal(await chat.page.textContent('.msg.agent code'), 'config.py');
    // markdown: list, bold and a code block with a copy button
    assert.equal(await chat.page.locator('.msg.agent >> nth=1 >> li').count(), 2);
    assert.equal(await chat.page.textContent('.msg.agent >> nth=1 >> strong'), '1–65535');
    assert.equal(await chat.page.textContent('.msg.agent .code-lang'), 'python');
    assert.equal(await chat.page.locator('.msg.user .user-text').textContent(), fixture.prompt);
    assert.equal(await chat.page.textContent('.session-title'), 'Validate ports in the config parser');
    assert.equal(await chat.page.textContent('.model-name'), 'gpt-4.1');
  });

  it('takes a retried stream\'s void message off the page (_meta.agentls.replaces)', async () => {
    const chunk = (sessionUpdate: 'agent_message_chunk' | 'agent_thought_chunk', t: string, messageId: string,
      replaces?: string): ToWebview => ({
      type: 'update', sessionId: fixture.sessionId,
      update: { sessionUpdate, content: { type: 'text', text: t }, messageId,
        ...(replaces ? { _meta: { agentls: { replaces } } } : {}) } as SessionUpdate,
    });
    await chat.send(...start, chunk('agent_thought_chunk', 'thinking', 'm1'), chunk('agent_message_chunk', 'Hello ', 'm1'));
    assert.deepEqual(await chat.page.$$eval('.msg.agent', (els) => els.map((e) => e.textContent ?? '')), ['Hello ']);
    assert.equal(await chat.page.locator('details.thought').count(), 1);
    await chat.send(chunk('agent_message_chunk', 'Hi there', 'm2', 'm1'));
    assert.deepEqual(await chat.page.$$eval('.msg.agent', (els) => els.map((e) => e.textContent ?? '')), ['Hi there']);
    assert.equal(await chat.page.locator('details.thought').count(), 0);
  });

  it('updates tool cards in place with kind, locations and status', async () => {
    const msgs = fixtureMessages(fixture);
    const firstCall = fixture.events.findIndex((e) => 'update' in e && (e.update as { sessionUpdate: string }).sessionUpdate === 'tool_call');
    await chat.send(...start, ...msgs.slice(0, firstCall + 1));
    const card = chat.page.locator('details.tool[data-tool-call-id="call_1"]');
    assert.equal(await card.getAttribute('data-status'), 'pending');
    assert.equal(await card.getAttribute('data-kind'), 'read');
    await card.evaluate((el) => ((el as unknown as { __mark: number }).__mark = 42));
    await chat.send(...msgs.slice(firstCall + 1));
    assert.equal(await card.count(), 1);
    assert.equal(await card.evaluate((el) => (el as unknown as { __mark: number }).__mark), 42, 'same DOM node');
    assert.equal(await card.getAttribute('data-status'), 'completed');
    assert.equal(await card.locator('.tool-status').textContent(), 'Done');
    assert.equal(await card.locator('.tool-kind').textContent(), 'read');
    assert.equal(await card.locator('.loc').textContent(), 'config.py');
    assert.equal(await card.locator('.loc').getAttribute('data-path'), '/work/demo/src/config.py');

    const cards = await chat.page.$$eval('details.tool', (els) =>
      els.map((e) => [(e as HTMLElement).dataset.toolCallId, (e as HTMLElement).dataset.kind, (e as HTMLElement).dataset.status]),
    );
    assert.deepEqual(cards, [
      ['call_1', 'read', 'completed'],
      ['call_2', 'edit', 'completed'],
      ['call_3', 'execute', 'completed'],
      ['call_4', 'search', 'failed'],
    ]);
    // Collapsible: reads are closed, edits and failures open.
    assert.equal(await card.evaluate((e) => (e as HTMLDetailsElement).open), false);
    assert.equal(await chat.page.locator('details.tool[data-tool-call-id="call_4"]').evaluate((e) => (e as HTMLDetailsElement).open), true);
    await card.locator('summary').click();
    assert.equal(await card.evaluate((e) => (e as HTMLDetailsElement).open), true);
    assert.match((await card.locator('.tool-output').textContent()) ?? '', /def parse_port/);
  });

  it('nests a subagent\'s calls under its delegate card, through the card\'s own updates', async () => {
    const u = (update: Record<string, unknown>): ToWebview => ({ type: 'update', sessionId: 'S', update: update as unknown as SessionUpdate });
    const child = (id: string, status: string) => ({ toolCallId: `d1.1.${id}`, status, _meta: { agentls: { parentToolCallId: 'd1' } } });
    await chat.send({ type: 'reset', sessionId: 'S', title: null }, { type: 'userMessage', text: 'explore' },
      { type: 'turnState', running: true },
      u({ sessionUpdate: 'tool_call', toolCallId: 'd1', title: 'Delegate: find the parser', kind: 'think', status: 'pending' }),
      u({ sessionUpdate: 'tool_call', ...child('c1', 'pending'), title: 'Read parser.py', kind: 'read' }),
      u({ sessionUpdate: 'tool_call_update', toolCallId: 'd1', status: 'in_progress',
        content: [{ type: 'content', content: { type: 'text', text: '1. find the parser — step 1: Read parser.py' } }] }),
      u({ sessionUpdate: 'tool_call_update', ...child('c1', 'completed') }),
      u({ sessionUpdate: 'tool_call', ...child('c2', 'pending'), title: 'Search def parse', kind: 'search' }));
    const card = chat.page.locator('details.tool[data-tool-call-id="d1"]');
    const nested = card.locator('.subagent-calls > details.tool');
    assert.deepEqual(await nested.evaluateAll((els) => els.map((e) => [(e as HTMLElement).dataset.toolCallId, (e as HTMLElement).dataset.status])),
      [['d1.1.c1', 'completed'], ['d1.1.c2', 'pending']]);
    assert.equal(await card.evaluate((e) => (e as HTMLDetailsElement).open), true, 'open while its children run');
    assert.match((await card.locator(':scope > .tool-body').textContent()) ?? '', /step 1: Read parser.py/);
    // Top-level cards: only the delegate card.
    assert.deepEqual(await chat.page.$$eval('.transcript > details.tool',
      (els) => els.map((e) => (e as HTMLElement).dataset.toolCallId)), ['d1']);
    await chat.send(u({ sessionUpdate: 'tool_call_update', toolCallId: 'd1', status: 'completed' }));
    assert.equal(await nested.count(), 2, 'the children survive the card\'s last update');
  });

  it('clicking a location asks the extension to open it', async () => {
    await chat.send(...start, ...fixtureMessages(fixture));
    await chat.clearPosted();
    await chat.page.locator('details.tool[data-tool-call-id="call_2"] .loc').click();
    assert.deepEqual(await chat.posted(), [{ type: 'openLocation', path: '/work/demo/src/config.py', line: 1 }]);
  });

  it('shows edits as a coloured line diff', async () => {
    await chat.send(...start, ...fixtureMessages(fixture));
    const diff = chat.page.locator('details.tool[data-tool-call-id="call_2"] .diff');
    assert.equal(await diff.locator('.diff-stat').textContent(), '+7 −1');
    const removed = await diff.locator('tr.del .code').allTextContents();
    const added = await diff.locator('tr.add .code').allTextContents();
    assert.deepEqual(removed, ['−    return int(value)']);
    assert.equal(added.length, 7);
    assert.ok(added.some((l) => l.includes('if not 1 <= port <= 65535:')));
    const bg = (sel: string) => diff.locator(sel).first().evaluate((e) => getComputedStyle(e).backgroundColor);
    assert.equal(await bg('tr.add'), 'rgba(155, 185, 85, 0.2)');
    assert.equal(await bg('tr.del'), 'rgba(255, 0, 0, 0.2)');
    assert.equal(await diff.locator('tr.gap').count(), 1, 'unchanged tail folded');
  });

  it('shows terminal output for terminal content', async () => {
    await chat.send(...start, ...fixtureMessages(fixture));
    const term = chat.page.locator('.terminal[data-terminal-id="term-1"]');
    await chat.page.locator('details.tool[data-tool-call-id="call_3"] summary').click();
    assert.match((await term.locator('.term-output').textContent()) ?? '', /12 passed in 0.41s/);
    assert.equal(await term.locator('.term-exit').textContent(), 'exit 0');
    await chat.clearPosted();
    await term.locator('.term-open').click();
    assert.deepEqual(await chat.posted(), [{ type: 'openTerminal', terminalId: 'term-1' }]);
  });

  it('shows the plan with statuses', async () => {
    const msgs = fixtureMessages(fixture);
    await chat.send(...start, ...msgs.slice(0, 5));
    assert.equal(await chat.page.isVisible('.plan'), true);
    assert.deepEqual(
      await chat.page.$$eval('.plan-entry', (els) => els.map((e) => [(e as HTMLElement).dataset.status, e.textContent])),
      [
        ['in_progress', 'Read src/config.py'],
        ['pending', 'Validate the port range in parse_port'],
        ['pending', 'Run the test suite'],
      ],
    );
    assert.equal(await chat.page.textContent('.plan-count'), '0/3');
    await chat.send(...msgs.slice(5));
    assert.equal(await chat.page.textContent('.plan-count'), '3/3');
  });

  it('shows the context usage meter', async () => {
    const msgs = fixtureMessages(fixture);
    await chat.send(...start, ...msgs.slice(0, 2));
    assert.equal(await chat.page.textContent('.usage-text'), 'Context 14% · 18.4k / 128k');
    await chat.send(...msgs.slice(2));
    assert.equal(await chat.page.textContent('.usage-text'), 'Context 32% · 41.2k / 128k');
    assert.equal(await chat.page.locator('.usage-fill').evaluate((e) => (e as HTMLElement).style.width), '32.2%');
    await chat.send({ type: 'update', sessionId: 's', update: { sessionUpdate: 'usage_update', used: 120000, size: 128000 } });
    assert.equal(await chat.page.getAttribute('.usage', 'data-level'), 'critical');
  });

  it('shows compaction notices', async () => {
    await chat.send(...start, ...fixtureMessages(fixture));
    const c = chat.page.locator('.compaction');
    assert.equal(await c.count(), 1);
    assert.equal(await c.getAttribute('data-status'), 'completed');
    assert.equal(await c.locator('.divider-label').textContent(), 'Context compacted');
    await c.locator('summary').click();
    assert.match((await c.locator('.md').textContent()) ?? '', /Goal: validate ports/);
  });

  it('permission card buttons post the chosen option', async () => {
    const msgs = fixtureMessages(fixture);
    const idx = msgs.findIndex((m) => m.type === 'permissionRequest');
    await chat.send(...start, ...msgs.slice(0, idx + 1));
    const card = chat.page.locator('.permission');
    assert.equal(await card.locator('.perm-title').textContent(), 'Run pytest -q');
    assert.equal(await card.locator('.cmd-line').textContent(), '$ pytest -q');
    assert.deepEqual(await card.locator('button').allTextContents(), ['Allow once', 'Always allow pytest', 'Reject', 'Never allow']);
    await chat.clearPosted();
    await card.locator('button', { hasText: 'Always allow pytest' }).click();
    assert.deepEqual(await chat.posted(), [{ type: 'permission', requestId: 'perm-1', optionId: 'allow-always' }]);
    assert.equal(await card.locator('button:disabled').count(), 4, 'buttons disabled after a choice');
    await chat.send({ type: 'permissionResolved', requestId: 'perm-1', optionId: 'allow-always' });
    assert.equal(await chat.page.textContent('.permission .perm-result'), 'Always allowed');
  });

  it('Steer, Stop (button and Esc) while running', async () => {
    await chat.send(...start);
    assert.equal(await chat.page.isVisible('.working'), true, 'working dots while nothing streams yet');
    assert.equal(await chat.page.getAttribute('[data-action="send"]', 'data-mode'), 'steer');
    assert.equal(await chat.page.isEnabled('[data-action="stop"]'), true);
    await chat.clearPosted();
    await chat.page.fill('.prompt', 'use the existing helper');
    await chat.page.press('.prompt', 'Enter');
    await chat.page.click('[data-action="stop"]');
    await chat.page.press('.prompt', 'Escape');
    assert.deepEqual(await chat.posted(), [{ type: 'steer', text: 'use the existing helper' }, { type: 'stop' }, { type: 'stop' }]);
    assert.equal(await chat.page.inputValue('.prompt'), '');
  });

  it('Send, Shift+Enter, Compact with focus and Undo when idle', async () => {
    await chat.send({ type: 'reset', sessionId: 's1' }, { type: 'turnState', running: false });
    await chat.clearPosted();
    assert.equal(await chat.page.isDisabled('[data-action="send"]'), true, 'empty prompt cannot be sent');
    await chat.page.click('.prompt');
    await chat.page.keyboard.type('line one');
    await chat.page.keyboard.press('Shift+Enter');
    await chat.page.keyboard.type('line two');
    assert.equal(await chat.page.inputValue('.prompt'), 'line one\nline two');
    await chat.page.keyboard.press('Enter');
    await chat.page.click('[data-action="compact"]');
    await chat.page.fill('.compact-focus', 'the parser');
    await chat.page.click('[data-action="compactConfirm"]');
    await chat.page.click('[data-action="compact"]');
    await chat.page.press('.compact-focus', 'Enter');
    await chat.page.click('[data-action="undo"]');
    assert.deepEqual(await chat.posted(), [
      { type: 'prompt', text: 'line one\nline two' },
      { type: 'compact', focus: 'the parser' },
      { type: 'compact' },
      { type: 'undo' },
    ]);
    assert.equal(await chat.page.isDisabled('[data-action="stop"]'), true);
    assert.equal(await chat.page.isHidden('.working'), true);
  });

  it('session picker lists sessions, searches and loads one; new session button', async () => {
    await chat.send({ type: 'reset', sessionId: 'A' });
    await chat.clearPosted();
    await chat.page.click('[data-action="history"]');
    assert.deepEqual(await chat.posted(), [{ type: 'listSessions' }]);
    const now = Date.now();
    await chat.send({
      type: 'sessions',
      sessions: [
        { sessionId: 'A', title: 'Validate ports', cwd: '/work/demo', updatedAt: new Date(now - 120_000).toISOString() },
        { sessionId: 'B', title: 'Fix <b>flaky</b> test', cwd: '/work/demo', updatedAt: new Date(now - 3 * 3600_000).toISOString(),
          _meta: { agentls: { children: [{ sessionId: 'B1', title: 'Find the <flaky> test' }, { sessionId: 7 }] } } },
      ],
    });
    assert.deepEqual(await chat.page.locator('.session-name').allTextContents(),
      ['Validate ports', 'Fix <b>flaky</b> test', '↳ Find the <flaky> test']);
    assert.deepEqual(await chat.page.locator('.session-meta').allTextContents(), ['2 min ago · demo', '3 h ago · demo', 'subagent']);
    assert.equal(await chat.page.locator('.session-item.child').getAttribute('data-session-id'), 'B1');
    assert.equal(await chat.page.locator('.session-item.current').getAttribute('data-session-id'), 'A');
    assert.equal(await chat.page.locator('[data-action="moreSessions"]').count(), 0, 'no more pages');
    await chat.clearPosted();
    await chat.page.fill('.session-search', 'flaky');
    await chat.page.waitForFunction(() => (window as unknown as { __posted: unknown[] }).__posted.length > 0);
    await chat.page.click('.session-item[data-session-id="B"]');
    assert.deepEqual(await chat.posted(), [{ type: 'listSessions', query: 'flaky' }, { type: 'loadSession', sessionId: 'B' }]);
    assert.equal(await chat.page.isHidden('.sessions-panel'), true);
    // Reopening clears the search; a further page is appended.
    await chat.page.click('[data-action="history"]');
    assert.equal(await chat.page.inputValue('.session-search'), '');
    await chat.send({ type: 'sessions', sessions: [{ sessionId: 'C', title: 'First', updatedAt: null }], nextCursor: 'page2' });
    await chat.clearPosted();
    await chat.page.click('[data-action="moreSessions"]');
    assert.deepEqual(await chat.posted(), [{ type: 'listSessions', cursor: 'page2' }]);
    await chat.send({ type: 'sessions', sessions: [{ sessionId: 'D', title: 'Second', updatedAt: null }], nextCursor: null, append: true });
    assert.deepEqual(await chat.page.locator('.session-name').allTextContents(), ['First', 'Second']);
    await chat.clearPosted();
    await chat.page.click('[data-action="newSession"]');
    assert.deepEqual(await chat.posted(), [{ type: 'newSession' }]);
  });

  it('rebuilds the view from a replayed session', async () => {
    await chat.send(...start, ...fixtureMessages(fixture));
    const t = (s: string) => ({ type: 'text' as const, text: s });
    await chat.send(
      { type: 'reset', sessionId: 'B', replaying: true },
      { type: 'update', sessionId: 'B', update: { sessionUpdate: 'user_message_chunk', content: t('Why is ') } },
      { type: 'update', sessionId: 'B', update: { sessionUpdate: 'user_message_chunk', content: t('the test flaky?') } },
      { type: 'update', sessionId: 'B', update: { sessionUpdate: 'agent_message_chunk', content: t('It depends on ') } },
      { type: 'update', sessionId: 'B', update: { sessionUpdate: 'agent_message_chunk', content: t('wall-clock time.') } },
      { type: 'update', sessionId: 'B', update: { sessionUpdate: 'user_message_chunk', content: t('Fix it') } },
      { type: 'update', sessionId: 'B', update: { sessionUpdate: 'agent_message_chunk', content: t('Fixed.') } },
      { type: 'turnState', running: false },
    );
    assert.deepEqual(await chat.page.locator('.msg.user .user-text').allTextContents(), ['Why is the test flaky?', 'Fix it']);
    assert.deepEqual(await chat.page.locator('.msg.agent').allTextContents(), ['It depends on wall-clock time.', 'Fixed.']);
    assert.equal(await chat.page.locator('details.tool').count(), 0);
    assert.equal(await chat.page.isHidden('.plan'), true);
    assert.equal(await chat.page.isHidden('.usage'), true);
  });

  it('shows failures clearly', async () => {
    await chat.send(...start, {
      type: 'turnResult',
      result: { finalResponse: null, completed: false, failed: true, exitReason: 'failed', error: { category: 'rate_limit', message: 'Rate limit reached for gpt-4.1; retry in 20 s.' } },
    });
    const n = chat.page.locator('.notice.level-error');
    assert.equal(await n.getAttribute('role'), 'alert');
    assert.equal(await n.locator('.notice-text').textContent(), 'The agent stopped with an error (rate limit).');
    assert.equal(await n.locator('.notice-detail').textContent(), 'Rate limit reached for gpt-4.1; retry in 20 s.');
    await chat.send({ type: 'status', state: 'error', message: 'spawn agentls ENOENT' });
    assert.equal(await chat.page.isVisible('.server-banner'), true);
    assert.match((await chat.page.textContent('.server-banner')) ?? '', /ENOENT/);
  });

  it('follows the theme: colours come from VS Code variables', async () => {
    await chat.send(...start, ...fixtureMessages(fixture));
    const colours = () =>
      chat.page.evaluate(() => ({
        bg: getComputedStyle(document.body).backgroundColor,
        fg: getComputedStyle(document.querySelector('.msg.agent')!).color,
        primary: getComputedStyle(document.querySelector('.permission .btn.primary')!).backgroundColor,
      }));
    assert.deepEqual(await colours(), { bg: 'rgb(24, 24, 24)', fg: 'rgb(204, 204, 204)', primary: 'rgb(0, 120, 212)' });
    // Switch to light theme colours the way the workbench does (variables on <html>).
    await chat.page.evaluate(() => {
      const s = document.documentElement.style;
      s.setProperty('--vscode-sideBar-background', '#f8f8f8');
      s.setProperty('--vscode-foreground', '#3b3b3b');
      s.setProperty('--vscode-button-background', '#005fb8');
    });
    assert.deepEqual(await colours(), { bg: 'rgb(248, 248, 248)', fg: 'rgb(59, 59, 59)', primary: 'rgb(0, 95, 184)' });
  });

  it('never turns agent text into live HTML', async () => {
    await chat.send(...start, {
      type: 'update',
      sessionId: 's',
      update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: '<img src=x onerror="window.__pwned=1"> [x](javascript:window.__pwned=2) <script>window.__pwned=3</script>' } },
    });
    assert.equal(await chat.page.locator('.msg.agent img, .msg.agent script').count(), 0);
    assert.equal(await chat.page.locator('.msg.agent a').count(), 0);
    assert.equal(await chat.page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
  });

  it('renders the full turn (screenshot: test-artifacts/chat.png)', async () => {
    const tall = await openChat(browser!, url, { width: 440, height: 1750 });
    try {
      const msgs = fixtureMessages(fixture);
      const idx = msgs.findIndex((m) => m.type === 'permissionRequest');
      // Everything up to the permission card, answered, then the rest.
      await tall.send(...start, ...msgs.slice(0, idx + 1), { type: 'permissionResolved', requestId: 'perm-1', optionId: 'allow-once' }, ...msgs.slice(idx + 1));
      await tall.page.locator('details.tool[data-tool-call-id="call_3"] summary').click();
      // A second pending permission card, to show its buttons.
      await tall.send({
        type: 'permissionRequest',
        requestId: 'perm-2',
        toolCall: { toolCallId: 'call_5', title: 'Run git commit -am "Validate ports"', kind: 'execute', rawInput: { command: 'git commit -am "Validate ports"' } },
        // The option names the real server sends.
        options: [
          { optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' },
          { optionId: 'allow_always', name: 'Always allow', kind: 'allow_always' },
          { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' },
          { optionId: 'reject_always', name: 'Always reject', kind: 'reject_always' },
        ],
      });
      await tall.page.fill('.prompt', 'Also add a test for port 0');
      await tall.page.evaluate(() => document.fonts.ready);
      await tall.page.screenshot({ path: path.join(ARTIFACTS, 'chat.png') });
      assert.deepEqual(tall.errors, []);
    } finally {
      await tall.page.close();
    }
  });
});

describe('chat webview: a turn recorded from the real server', function () {
  this.timeout(30_000);
  let browser: Browser | undefined;
  let chat: ChatPage;
  const recorded = JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'recorded-turn.json'), 'utf8')) as {
    prompt: string;
    sessionId: string;
    events: { sessionId: string; update: SessionUpdate }[];
    result: TurnResult;
  };

  before(async function () {
    const executablePath = findChromium();
    if (!executablePath) this.skip();
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
    chat = await openChat(browser, writeTestPage(), { width: 440, height: 1500 });
  });
  after(async () => {
    await browser?.close();
  });

  it('renders the recorded stream: one message per reply, final tool states, diff, plan, usage', async () => {
    await chat.send(
      { type: 'status', state: 'ready', model: 'scripted-model' },
      { type: 'reset', sessionId: recorded.sessionId },
      { type: 'userMessage', text: recorded.prompt },
      { type: 'turnState', running: true },
      ...recorded.events.map((e): ToWebview => ({ type: 'update', sessionId: e.sessionId, update: e.update })),
      { type: 'turnResult', result: recorded.result },
      { type: 'turnState', running: false },
    );
    const agents = await chat.page.locator('.msg.agent').allTextContents();
    assert.equal(agents.length, 2, 'word-by-word chunks form one message per reply');
    assert.equal(agents[0], "I'll start by reading src/config.py to see how ports are parsed.");
    assert.equal(await chat.page.locator('.msg.agent >> nth=1 >> li').count(), 2);
    assert.equal(await chat.page.textContent('.msg.agent >> nth=1 >> pre code'), 'parse_port("8080")  # 8080\nparse_port("http")  # ValueError');
    const statuses = await chat.page.$$eval('details.tool', (els) => els.map((e) => (e as HTMLElement).dataset.status));
    assert.ok(statuses.length >= 4 && statuses.every((s) => s === 'completed'), JSON.stringify(statuses));
    assert.equal(await chat.page.locator('.diff tr.add').count(), 7);
    assert.equal(await chat.page.textContent('.plan-count'), '3/3');
    assert.match((await chat.page.textContent('.usage-text')) ?? '', /^Context \d+% · /);
    assert.equal(await chat.page.locator('.thought').count(), 1);
    assert.equal(await chat.page.locator('.compaction').getAttribute('data-status'), 'completed');
    assert.equal(await chat.page.locator('.notice').count(), 0, 'a clean turn shows no notices');
    await chat.page.screenshot({ path: path.join(ARTIFACTS, 'recorded.png') });
    assert.deepEqual(chat.errors, []);
  });
  it('completes @file mentions and sends them, with the editor context when the toggle is on', async () => {
    await chat.send({ type: 'status', state: 'ready' }, { type: 'editorContext', label: 'app.py · lines 3–5' });
    const toggle = chat.page.locator('[data-action="toggleContext"]');
    assert.equal(await toggle.textContent(), 'app.py · lines 3–5');
    assert.equal(await toggle.getAttribute('aria-pressed'), 'false');
    await toggle.click();
    assert.equal(await toggle.getAttribute('aria-pressed'), 'true');

    await chat.page.click('.prompt');
    await chat.page.keyboard.type('explain @ap');
    await chat.page.waitForFunction(() =>
      (window as unknown as { __posted: { type: string; query?: string }[] }).__posted.some((m) => m.type === 'mentionQuery' && m.query === 'ap'),
    );
    await chat.send({
      type: 'mentionResults',
      query: 'ap',
      items: [
        { path: 'src/app.py', uri: 'file:///ws/src/app.py' },
        { path: 'docs/api.md', uri: 'file:///ws/docs/api.md' },
      ],
    });
    assert.equal(await chat.page.isVisible('.mention-menu'), true);
    assert.deepEqual(await chat.page.$$eval('.mention-item .mention-name', (els) => els.map((e) => e.textContent)), ['app.py', 'api.md']);
    await chat.page.keyboard.press('ArrowDown');
    await chat.page.keyboard.press('ArrowUp');
    await chat.page.keyboard.press('Enter'); // picks, does not send
    assert.equal(await chat.page.inputValue('.prompt'), 'explain @src/app.py ');
    assert.equal(await chat.page.isVisible('.mention-menu'), false);
    await chat.page.keyboard.type('please');
    await chat.page.keyboard.press('Enter');
    const sent = (await chat.posted()).filter((m) => m.type === 'prompt');
    assert.deepEqual(sent, [{ type: 'prompt', text: 'explain @src/app.py please', context: true, mentions: [{ path: 'src/app.py', uri: 'file:///ws/src/app.py' }] }]);
  });
  it('completes /commands at the start of the prompt and sends the picked one with its arguments', async () => {
    await chat.send({ type: 'status', state: 'ready' });
    await chat.page.fill('.prompt', '');
    await chat.page.click('.prompt');
    await chat.page.keyboard.type('/re');
    await chat.page.waitForFunction(() =>
      (window as unknown as { __posted: { type: string; query?: string }[] }).__posted.some((m) => m.type === 'commandQuery' && m.query === 're'),
    );
    await chat.send({
      type: 'commandResults',
      query: 're',
      items: [
        { name: 'review', description: 'Review a file', argumentHint: '<file>', kind: 'command' },
        { name: 'release-notes', description: 'Write release notes', argumentHint: null, kind: 'skill' },
      ],
    });
    assert.equal(await chat.page.isVisible('.command-menu'), true);
    assert.deepEqual(await chat.page.$$eval('.command-menu .mention-name', (els) => els.map((e) => e.textContent)), ['/review <file>', '/release-notes']);
    await chat.page.keyboard.press('ArrowDown');
    await chat.page.keyboard.press('Tab');
    assert.equal(await chat.page.inputValue('.prompt'), '/release-notes ');
    assert.equal(await chat.page.isVisible('.command-menu'), false);
    await chat.page.keyboard.type('v2.0');
    await chat.page.keyboard.press('Enter');
    const sent = (await chat.posted()).filter((m) => m.type === 'prompt');
    assert.equal(sent.at(-1)?.type === 'prompt' && sent.at(-1)?.text, '/release-notes v2.0');
    assert.deepEqual(chat.errors, []);
  });
});
