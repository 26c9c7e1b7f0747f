import assert from 'node:assert/strict';
import type { PermissionOption } from '../../src/acp';
import { describeToolCall, modalPrompt, outcomeFor, permissionButtons, resolvedLabel } from '../../src/core/permissions';

const OPTIONS: PermissionOption[] = [
  { optionId: 'rej-always', name: 'Never for this command', kind: 'reject_always' },
  { optionId: 'allow', name: 'Allow once', kind: 'allow_once' },
  { optionId: 'rej', name: '', kind: 'reject_once' },
  { optionId: 'always', name: 'Always allow', kind: 'allow_always' },
];

describe('permission option mapping', () => {
  it('orders options allow_once, allow_always, reject_once, reject_always', () => {
    assert.deepEqual(
      permissionButtons(OPTIONS).map((b) => b.kind),
      ['allow_once', 'allow_always', 'reject_once', 'reject_always'],
    );
  });

  it('uses the server names, with defaults for blank ones, and styles by kind', () => {
    const b = permissionButtons(OPTIONS);
    assert.deepEqual(
      b.map((x) => [x.label, x.style]),
      [
        ['Allow once', 'primary'],
        ['Always allow', 'secondary'],
        ['Reject', 'secondary'],
        ['Never for this command', 'danger'],
      ],
    );
  });

  it('keeps unknown kinds last under their id', () => {
    const b = permissionButtons([{ optionId: 'x', name: '', kind: 'weird' as never }, OPTIONS[1]!]);
    assert.deepEqual(b.map((x) => [x.optionId, x.kind, x.label]), [['allow', 'allow_once', 'Allow once'], ['x', 'other', 'x']]);
  });

  it('maps a choice to the ACP outcome', () => {
    assert.deepEqual(outcomeFor(OPTIONS, 'allow'), { outcome: { outcome: 'selected', optionId: 'allow' } });
    assert.deepEqual(outcomeFor(OPTIONS, null), { outcome: { outcome: 'cancelled' } });
    assert.deepEqual(outcomeFor(OPTIONS, undefined), { outcome: { outcome: 'cancelled' } });
    assert.deepEqual(outcomeFor(OPTIONS, 'not-an-option'), { outcome: { outcome: 'cancelled' } });
  });

  it('labels a resolved card', () => {
    assert.equal(resolvedLabel(OPTIONS, 'always'), 'Always allowed');
    assert.equal(resolvedLabel(OPTIONS, 'rej'), 'Rejected');
    assert.equal(resolvedLabel(OPTIONS, null), 'Cancelled');
  });

  it('builds the modal fallback prompt', () => {
    const p = modalPrompt({
      sessionId: 's',
      toolCall: { toolCallId: 't', kind: 'execute', rawInput: { command: 'rm -rf build' }, locations: [{ path: '/w/build', line: null }] },
      options: OPTIONS,
    });
    assert.equal(p.message, 'agentls wants to: Run `rm -rf build`');
    assert.equal(p.detail, '$ rm -rf build\n\n/w/build');
    assert.deepEqual(p.items.map((i) => i.optionId), ['allow', 'always', 'rej', 'rej-always']);
  });

  it('describes tool calls', () => {
    assert.equal(describeToolCall({ toolCallId: 't', title: 'Edit a.py' }), 'Edit a.py');
    assert.equal(describeToolCall({ toolCallId: 't', kind: 'edit', rawInput: { path: 'a.py' } }), 'edit a.py');
    assert.equal(describeToolCall({ toolCallId: 't' }), 'A tool call');
  });
});
