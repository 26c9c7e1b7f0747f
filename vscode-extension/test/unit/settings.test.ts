import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildInitializationOptions, effectiveSetting, fillAgentCapabilities, serverCommand, UNTRUSTED_RESTRICTED } from '../../src/core/settings';

const reader = (o: Record<string, unknown>) => (k: string) => o[k];

describe('settings → initializationOptions', () => {
  it('sends only what the user set', () => {
    const { options, problems } = buildInitializationOptions(reader({}));
    assert.deepEqual(options, {});
    assert.deepEqual(problems, []);
  });

  it('maps every key from docs/protocol.md', () => {
    const { options, problems } = buildInitializationOptions(
      reader({
        model: ' gpt-4.1 ',
        baseUrl: 'http://127.0.0.1:8000/v1',
        provider: 'openai',
        apiKeyEnv: 'OPENAI_API_KEY',
        fallbackModels: ['a', '', 'b'],
        maxIterations: 40,
        contextWindow: 128000,
        compressionThreshold: 0.5,
        approval: 'auto-edit',
      }),
    );
    assert.deepEqual(problems, []);
    assert.deepEqual(options, {
      model: 'gpt-4.1',
      baseUrl: 'http://127.0.0.1:8000/v1',
      provider: 'openai',
      apiKeyEnv: 'OPENAI_API_KEY',
      fallbackModels: ['a', 'b'],
      maxIterations: 40,
      contextWindow: 128000,
      compressionThreshold: 0.5,
      approval: 'auto-edit',
    });
  });

  it('treats empty enum choices as unset', () => {
    const { options, problems } = buildInitializationOptions(reader({ provider: '', approval: '', maxIterations: null }));
    assert.deepEqual(options, {});
    assert.deepEqual(problems, []);
  });

  it('drops and reports invalid values', () => {
    const { options, problems } = buildInitializationOptions(
      reader({ provider: 'bard', approval: 'always', apiKeyEnv: 'sk-live-123', compressionThreshold: 5, maxIterations: -1 }),
    );
    assert.deepEqual(options, {});
    assert.deepEqual(
      problems.map((p) => p.key).sort(),
      ['agentls.apiKeyEnv', 'agentls.approval', 'agentls.compressionThreshold', 'agentls.maxIterations', 'agentls.provider'],
    );
  });

  it('sends MCP servers and refuses malformed ones', () => {
    const servers = { time: { command: 'uvx', args: ['mcp-server-time'] }, docs: { type: 'http', url: 'http://127.0.0.1:1/mcp' } };
    assert.deepEqual(buildInitializationOptions(reader({ mcpServers: servers })).options, { mcpServers: servers });
    assert.deepEqual(buildInitializationOptions(reader({ mcpServers: {} })).options, {});
    for (const bad of [['x'], { a: 'cmd' }, { a: { args: [] } }]) {
      const { options, problems } = buildInitializationOptions(reader({ mcpServers: bad }));
      assert.deepEqual(options, {});
      assert.deepEqual(problems.map((p) => p.key), ['agentls.mcpServers']);
    }
    assert.ok(UNTRUSTED_RESTRICTED.includes('mcpServers')); // a cloned repository cannot choose what runs
  });

  it('declares the agent capability without clobbering others', () => {
    const caps: { experimental?: unknown } = { experimental: { other: 1 } };
    fillAgentCapabilities(caps);
    assert.deepEqual(caps.experimental, { other: 1, agent: { terminal: true, permissions: true, updates: true, diagnostics: true } });
    const empty: { experimental?: unknown } = {};
    fillAgentCapabilities(empty);
    assert.deepEqual(empty.experimental, { agent: { terminal: true, permissions: true, updates: true, diagnostics: true } });
  });

  it('builds the server command', () => {
    assert.deepEqual(serverCommand(reader({})), { command: 'agentls', args: ['lsp'] });
    assert.deepEqual(serverCommand(reader({ 'server.path': '/v/bin/python', 'server.args': ['-m', 'agentls.server', 'lsp'] })), {
      command: '/v/bin/python',
      args: ['-m', 'agentls.server', 'lsp'],
    });
  });

  it('takes folder over workspace over user values, and ignores restricted workspace values when untrusted', () => {
    const all = { globalValue: 'user', workspaceValue: 'ws', workspaceFolderValue: 'folder' };
    assert.equal(effectiveSetting(all, 'model', true), 'folder');
    assert.equal(effectiveSetting({ globalValue: 'user', workspaceValue: 'ws' }, 'model', true), 'ws');
    assert.equal(effectiveSetting(all, 'model', false), 'folder', 'harmless keys still follow the workspace');
    for (const key of UNTRUSTED_RESTRICTED) assert.equal(effectiveSetting(all, key, false), 'user', key);
    assert.equal(effectiveSetting(undefined, 'server.path', false), undefined);
  });

  it('restricts the same keys in package.json', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));
    assert.deepEqual(
      pkg.capabilities.untrustedWorkspaces.restrictedConfigurations,
      UNTRUSTED_RESTRICTED.map((k) => `agentls.${k}`),
    );
  });
});
