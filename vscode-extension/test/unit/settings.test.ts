import assert from 'node:assert/strict';
import { buildInitializationOptions, fillAgentCapabilities, serverCommand } from '../../src/core/settings';

const reader = (o: Record<string, unknown>) => (k: string) => o[k];

describe('settings → initializationOptions', () => {
  it('sends only what the user set', () => {
    const { options, problems } = buildInitializationOptions(reader({}));
    assert.deepEqual(options, {});
    assert.deepEqual(problems, []);
  });

  it('maps every key from PROTOCOL.md', () => {
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

  it('declares the agent capability without clobbering others', () => {
    const caps: { experimental?: unknown } = { experimental: { other: 1 } };
    fillAgentCapabilities(caps);
    assert.deepEqual(caps.experimental, { other: 1, agent: { terminal: true, permissions: true, updates: true } });
    const empty: { experimental?: unknown } = {};
    fillAgentCapabilities(empty);
    assert.deepEqual(empty.experimental, { agent: { terminal: true, permissions: true, updates: true } });
  });

  it('builds the server command', () => {
    assert.deepEqual(serverCommand(reader({})), { command: 'agentls', args: ['lsp'] });
    assert.deepEqual(serverCommand(reader({ 'server.path': '/v/bin/python', 'server.args': ['-m', 'server', 'lsp'] })), {
      command: '/v/bin/python',
      args: ['-m', 'server', 'lsp'],
    });
  });
});
