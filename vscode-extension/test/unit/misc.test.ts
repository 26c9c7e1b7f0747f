import assert from 'node:assert/strict';
import { webviewHtml } from '../../src/core/html';
import { ParticipantRenderer } from '../../src/core/participantStream';
import { isToExtension } from '../../src/protocol';

describe('webview protocol guard', () => {
  it('accepts well-formed messages and rejects the rest', () => {
    for (const m of [
      { type: 'ready' },
      { type: 'prompt', text: 'x' },
      { type: 'steer', text: 'x' },
      { type: 'stop' },
      { type: 'compact' },
      { type: 'compact', focus: 'f' },
      { type: 'undo' },
      { type: 'newSession' },
      { type: 'listSessions', query: 'q' },
      { type: 'loadSession', sessionId: 's' },
      { type: 'permission', requestId: 'r', optionId: null },
      { type: 'openLocation', path: '/a' },
      { type: 'openTerminal', terminalId: 't' },
    ])
      assert.equal(isToExtension(m), true, JSON.stringify(m));
    for (const m of [null, 'x', {}, { type: 'prompt' }, { type: 'compact', focus: 3 }, { type: 'permission', requestId: 'r' }, { type: 'rm -rf' }])
      assert.equal(isToExtension(m), false, JSON.stringify(m));
  });
});

describe('webview html', () => {
  it('has a CSP that only runs the nonce script', () => {
    const html = webviewHtml({ cspSource: 'vscode-webview://x', scriptUri: 'a.js', styleUri: 'a.css', nonce: 'N0nce' });
    assert.match(html, /script-src 'nonce-N0nce'/);
    assert.match(html, /default-src 'none'/);
    assert.match(html, /<script nonce="N0nce" src="a.js"><\/script>/);
    assert.ok(!/unsafe-inline|unsafe-eval/.test(html));
  });

  it('makes a fresh nonce each time', () => {
    const a = webviewHtml({ cspSource: 'x', scriptUri: 'a', styleUri: 'b' });
    const b = webviewHtml({ cspSource: 'x', scriptUri: 'a', styleUri: 'b' });
    const nonce = (h: string) => /nonce="([^"]+)"/.exec(h)![1];
    assert.notEqual(nonce(a), nonce(b));
    assert.ok(nonce(a)!.length >= 16);
  });
});

describe('chat participant stream', () => {
  it('streams message chunks as markdown and tool calls as progress', () => {
    const md: string[] = [];
    const progress: string[] = [];
    const r = new ParticipantRenderer({ markdown: (s) => md.push(s), progress: (s) => progress.push(s) });
    r.onUpdate({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Hel' } });
    r.onUpdate({ sessionUpdate: 'tool_call', toolCallId: 't', title: 'Read a.py', kind: 'read' });
    r.onUpdate({ sessionUpdate: 'tool_call_update', toolCallId: 't', status: 'failed' });
    r.onUpdate({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'lo' } });
    assert.deepEqual(md, ['Hel', 'lo']);
    assert.deepEqual(progress, ['Read a.py…', 'Read a.py failed']);
    assert.deepEqual(r.finish({ finalResponse: 'Hello', completed: true }), {});
    assert.deepEqual(md, ['Hel', 'lo']);
  });

  it('writes the final response when nothing streamed and reports failures', () => {
    const md: string[] = [];
    const r = new ParticipantRenderer({ markdown: (s) => md.push(s), progress: () => undefined });
    const out = r.finish({ finalResponse: 'partial', completed: false, failed: true, error: { message: 'Rate limited' } });
    assert.deepEqual(md, ['partial']);
    assert.deepEqual(out, { errorMessage: 'Rate limited' });
  });
});
