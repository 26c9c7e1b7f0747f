import assert from 'node:assert/strict';
import { buildSelectionPrompt, describeRange, mimeTypeFor } from '../../src/core/selection';

const ctx = {
  question: 'Why is this slow?',
  uri: 'file:///w/src/app.py',
  relativePath: 'src/app.py',
  languageId: 'python',
  text: 'for x in xs:\n    slow(x)\n',
  range: { startLine: 9, startCharacter: 0, endLine: 11, endCharacter: 0 },
};

describe('ask about selection', () => {
  it('builds a text block and a resource block', () => {
    const blocks = buildSelectionPrompt(ctx);
    assert.equal(blocks.length, 2);
    assert.deepEqual(blocks[1], { type: 'resource', resource: { uri: 'file:///w/src/app.py', text: ctx.text, mimeType: 'text/x-python' } });
    const t = blocks[0] as { type: string; text: string };
    assert.equal(t.type, 'text');
    assert.match(t.text, /^Why is this slow\?/);
    assert.match(t.text, /src\/app.py lines 10–11/);
    assert.match(t.text, /range 10:1-12:1/);
  });

  it('describes single lines and defaults the question', () => {
    const one = { ...ctx, question: '  ', range: { startLine: 4, startCharacter: 2, endLine: 4, endCharacter: 9 } };
    assert.equal(describeRange(one), 'src/app.py line 5');
    assert.match((buildSelectionPrompt(one)[0] as { text: string }).text, /^Explain this code\./);
  });

  it('maps language ids to mime types', () => {
    assert.equal(mimeTypeFor('typescript'), 'text/x-typescript');
    assert.equal(mimeTypeFor('unknown-lang'), 'text/plain');
  });
});
