import assert from 'node:assert/strict';
import { ChatController, type AgentRequester } from '../../src/core/controller';
import { isToExtension, type ToWebview } from '../../src/protocol';
import { commandAt } from '../../src/webview/commands';

describe('slash command completion', () => {
  it('finds the command name being typed at the start of the prompt, and only there', () => {
    assert.deepEqual(commandAt('/rev', 4), { start: 0, query: 'rev' });
    assert.deepEqual(commandAt('/', 1), { start: 0, query: '' });
    assert.deepEqual(commandAt('/frontend:re', 12), { start: 0, query: 'frontend:re' });
    assert.equal(commandAt('/review a.py', 12), null, 'past the name: arguments');
    assert.equal(commandAt('see /review', 11), null);
    assert.equal(commandAt('/src/app.py', 11), null, 'a path is not a command');
  });

  it('asks agent/listCommands (the session, else the workspace) and filters by prefix', async () => {
    const calls: { method: string; params: any }[] = [];
    const server: AgentRequester = {
      async request<R>(method: string, params: unknown): Promise<R> {
        calls.push({ method, params });
        if (method === 'agent/listCommands') {
          return { commands: [
            { name: 'memory', description: 'Show memory', argumentHint: null, kind: 'builtin' },
            { name: 'review', description: 'Review a file', argumentHint: '<file>', kind: 'command' },
            { name: 'Release-notes', description: 'Notes', kind: 'skill' },
          ], problems: [] } as R;
        }
        return (method === 'agent/newSession' ? { sessionId: 'S1' } : { finalResponse: 'ok', completed: true }) as R;
      },
    };
    const posted: ToWebview[] = [];
    const c = new ChatController({ connection: async () => server, cwd: () => '/ws', askPermissionModal: async () => null });
    c.attachView({ post: (m) => posted.push(m), isVisible: () => true });
    await c.handleMessage({ type: 'commandQuery', query: 're' });
    assert.deepEqual(calls.at(-1), { method: 'agent/listCommands', params: { cwd: '/ws' } });
    const first = posted.at(-1);
    assert.ok(first && first.type === 'commandResults');
    assert.deepEqual(first.items.map((i) => i.name), ['review', 'Release-notes']);
    await c.handleMessage({ type: 'prompt', text: 'hi' });
    await c.handleMessage({ type: 'commandQuery', query: '' });
    assert.deepEqual(calls.at(-1), { method: 'agent/listCommands', params: { sessionId: 'S1' } });
    assert.ok(isToExtension({ type: 'commandQuery', query: 'x' }) && !isToExtension({ type: 'commandQuery' }));
  });

  it('an older server without agent/listCommands gives no completion, not an error', async () => {
    const server: AgentRequester = { async request<R>(): Promise<R> { throw new Error('method not found'); } };
    const posted: ToWebview[] = [];
    const c = new ChatController({ connection: async () => server, cwd: () => '/ws', askPermissionModal: async () => null });
    c.attachView({ post: (m) => posted.push(m), isVisible: () => true });
    await c.handleMessage({ type: 'commandQuery', query: '' });
    assert.deepEqual(posted.at(-1), { type: 'commandResults', query: '', items: [] });
    assert.ok(!posted.some((m) => m.type === 'notice'));
  });
});
