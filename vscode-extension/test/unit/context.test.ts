import assert from 'node:assert/strict';
import type { TurnResult } from '../../src/acp';
import { describeContext, mentionAt, promptWithMentions, rankFiles } from '../../src/core/context';
import { ChatController, type AgentRequester } from '../../src/core/controller';
import { DiagnosticsWatch, answerDiagnostics, isDiagnosticsParams, toWire } from '../../src/core/diagnostics';
import { isToExtension, type ToWebview } from '../../src/protocol';

const range = (l1: number, c1: number, l2: number, c2: number) => ({ start: { line: l1, character: c1 }, end: { line: l2, character: c2 } });

describe('editor context and @file mentions', () => {
  it('labels what the toggle would send', () => {
    const rel = (p: string) => p.replace('/ws/', '');
    assert.equal(describeContext(undefined, rel), null);
    assert.equal(describeContext({ activeFile: { path: '/ws/a.py' } }, rel), 'a.py');
    const sel = { path: '/ws/src/b.py', text: 'x', range: range(2, 0, 5, 0) };
    assert.equal(describeContext({ activeFile: { path: '/ws/a.py' }, selection: sel }, rel), 'src/b.py · lines 3–5');
    assert.equal(describeContext({ activeFile: { path: '/ws/a.py' }, selection: { ...sel, text: '  ' } }, rel), 'a.py');
  });

  it('finds the @ being typed, and only that', () => {
    assert.deepEqual(mentionAt('look at @src/ap', 15), { start: 8, query: 'src/ap' });
    assert.deepEqual(mentionAt('@', 1), { start: 0, query: '' });
    assert.equal(mentionAt('mail me@example.com', 19), null);
    assert.equal(mentionAt('@done and more', 14), null);
  });

  it('ranks files: name prefix, then name, then path, then letters in order', () => {
    const files = ['src/app.py', 'docs/mapping.md', 'apps/x.ts', 'src/deep/a_p_p.txt', 'README.md'];
    assert.deepEqual(rankFiles(files, 'app'), ['src/app.py', 'docs/mapping.md', 'apps/x.ts', 'src/deep/a_p_p.txt']);
    assert.equal(rankFiles(files, '').length, 5);
    assert.deepEqual(rankFiles(files, 'zzz'), []);
  });

  it('makes resource_links of the mentions still in the text', () => {
    const m = [
      { path: 'src/app.py', uri: 'file:///ws/src/app.py' },
      { path: 'gone.py', uri: 'file:///ws/gone.py' },
      { path: 'src/app.py', uri: 'file:///ws/src/app.py' },
    ];
    assert.deepEqual(promptWithMentions('fix @src/app.py, please', m), [
      { type: 'text', text: 'fix @src/app.py, please' },
      { type: 'resource_link', uri: 'file:///ws/src/app.py', name: 'src/app.py' },
    ]);
    assert.equal(promptWithMentions('no mentions', m), 'no mentions');
    assert.equal(promptWithMentions('mail@src/app.py', m), 'mail@src/app.py');
  });

  it('the controller sends the context and the mentions with a panel prompt, and answers mention queries', async () => {
    const calls: { method: string; params: any }[] = [];
    const server: AgentRequester = {
      async request<R>(method: string, params: unknown): Promise<R> {
        calls.push({ method, params });
        return (method === 'agent/newSession' ? { sessionId: 'S1' } : ({ finalResponse: 'ok', completed: true } satisfies TurnResult)) as R;
      },
    };
    const posted: ToWebview[] = [];
    const ctx = { activeFile: { path: '/ws/a.py', languageId: 'python' }, selection: { path: '/ws/a.py', text: 'x = 1\n', range: range(0, 0, 1, 0) } };
    const c = new ChatController({
      connection: async () => server,
      cwd: () => '/ws',
      askPermissionModal: async () => null,
      editorContext: () => ctx,
      findFiles: async (q) => [{ path: `${q}.py`, uri: `file:///ws/${q}.py` }],
    });
    c.attachView({ post: (m) => posted.push(m), isVisible: () => true });
    await c.handleMessage({ type: 'prompt', text: 'explain @b.py', context: true, mentions: [{ path: 'b.py', uri: 'file:///ws/b.py' }] });
    const turn = calls.find((x) => x.method === 'agent/turn')!;
    assert.deepEqual(turn.params.context, ctx);
    assert.deepEqual(turn.params.prompt, [
      { type: 'text', text: 'explain @b.py' },
      { type: 'resource_link', uri: 'file:///ws/b.py', name: 'b.py' },
    ]);
    assert.ok(posted.some((m) => m.type === 'userMessage' && m.text === 'explain @b.py' && m.context === 'a.py line 1'));
    await c.handleMessage({ type: 'prompt', text: 'plain' });
    assert.equal(calls.filter((x) => x.method === 'agent/turn')[1]!.params.context, undefined, 'toggle off: no context');
    await c.handleMessage({ type: 'mentionQuery', query: 'ut' });
    assert.deepEqual(posted.at(-1), { type: 'mentionResults', query: 'ut', items: [{ path: 'ut.py', uri: 'file:///ws/ut.py' }] });
    c.setEditorContext('a.py · line 1');
    assert.deepEqual(posted.at(-1), { type: 'editorContext', label: 'a.py · line 1' });
    assert.ok(c.snapshot().some((m) => m.type === 'editorContext' && m.label === 'a.py · line 1'));
  });

  it('checks the new webview messages', () => {
    assert.ok(isToExtension({ type: 'prompt', text: 'x', context: true, mentions: [{ path: 'a', uri: 'file:///a' }] }));
    assert.ok(!isToExtension({ type: 'prompt', text: 'x', context: 'yes' }));
    assert.ok(!isToExtension({ type: 'prompt', text: 'x', mentions: [{ path: 1 }] }));
    assert.ok(isToExtension({ type: 'mentionQuery', query: '' }));
    assert.ok(!isToExtension({ type: 'mentionQuery' }));
  });
});

describe('agent/diagnostics', () => {
  it('converts VS Code diagnostics to LSP severities and codes', () => {
    assert.deepEqual(toWire({ range: range(1, 2, 1, 5), severity: 0, message: 'bad', source: 'pyright', code: { value: 42 } }), {
      range: range(1, 2, 1, 5),
      severity: 1,
      message: 'bad',
      source: 'pyright',
      code: '42',
    });
    assert.equal(toWire({ range: range(0, 0, 0, 0), severity: 3, message: 'h' }).severity, 4);
    assert.ok(!isDiagnosticsParams({ uris: 'x' }) && isDiagnosticsParams({ uris: ['file:///a'], settleMs: 10 }));
  });

  it('answers at once without settleMs, errors first', async () => {
    const watch = new DiagnosticsWatch();
    const read = () => [
      { range: range(5, 0, 5, 1), severity: 1, message: 'warn' },
      { range: range(9, 0, 9, 1), severity: 0, message: 'err' },
    ];
    const r = await answerDiagnostics({ uris: ['file:///a', 'file:///a'] }, watch, read, () => undefined);
    assert.deepEqual(r.diagnostics.length, 1);
    assert.deepEqual(r.diagnostics[0]!.diagnostics.map((d) => d.message), ['err', 'warn']);
  });

  it('after an edit, waits for the language server to report on it, then for quiet', async () => {
    const watch = new DiagnosticsWatch({ quietMs: 50 });
    let current = ['old problem'];
    watch.diagnosticsChanged(['file:///a.py'], () => 'python'); // python has a language server here
    watch.documentChanged('file:///a.py');
    setTimeout(() => {
      current = ['new problem'];
      watch.diagnosticsChanged(['file:///a.py'], () => 'python');
    }, 150);
    const started = Date.now();
    const r = await answerDiagnostics({ uris: ['file:///a.py'], settleMs: 3000 }, watch, () => current.map((message) => ({ range: range(0, 0, 0, 1), severity: 0, message })), () => 'python');
    assert.deepEqual(r.diagnostics[0]!.diagnostics.map((d) => d.message), ['new problem']);
    assert.ok(Date.now() - started < 2000, 'answered once settled, not at the limit');
  });

  it('does not wait long for a language that never had diagnostics', async () => {
    const watch = new DiagnosticsWatch({ unknownMs: 100 });
    watch.documentChanged('file:///notes.txt');
    const started = Date.now();
    await answerDiagnostics({ uris: ['file:///notes.txt'], settleMs: 5000 }, watch, () => [], () => 'plaintext');
    assert.ok(Date.now() - started < 1000);
  });
});
