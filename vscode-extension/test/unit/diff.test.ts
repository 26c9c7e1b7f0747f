import assert from 'node:assert/strict';
import { diffHunks, diffLines, splitLines } from '../../src/webview/diff';

const text = (n: number, f: (i: number) => string = (i) => `line ${i}`): string =>
  Array.from({ length: n }, (_, i) => f(i + 1)).join('\n') + '\n';

describe('line diff', () => {
  it('splits lines and ignores the final newline', () => {
    assert.deepEqual(splitLines('a\nb\n'), ['a', 'b']);
    assert.deepEqual(splitLines('a\r\nb'), ['a', 'b']);
    assert.deepEqual(splitLines(null), []);
  });

  it('finds a changed line in the middle', () => {
    const d = diffLines('a\nb\nc\n', 'a\nB\nc\n');
    assert.deepEqual(
      d.map((l) => `${l.type}:${l.text}`),
      ['ctx:a', 'del:b', 'add:B', 'ctx:c'],
    );
    const del = d[1] as { oldNo: number };
    const add = d[2] as { newNo: number };
    assert.equal(del.oldNo, 2);
    assert.equal(add.newNo, 2);
  });

  it('handles insertions and deletions with correct numbering', () => {
    const d = diffLines('a\nb\nc\nd\n', 'a\nc\nx\nd\ne\n');
    assert.deepEqual(
      d.map((l) => `${l.type}:${l.text}`),
      ['ctx:a', 'del:b', 'ctx:c', 'add:x', 'ctx:d', 'add:e'],
    );
    const last = d[d.length - 1] as { newNo: number };
    assert.equal(last.newNo, 5);
  });

  it('treats a missing old text as a new file', () => {
    const s = diffHunks(null, 'x\ny\n');
    assert.equal(s.created, true);
    assert.equal(s.added, 2);
    assert.equal(s.removed, 0);
  });

  it('is minimal on random edits (reconstructs both sides)', () => {
    let seed = 7;
    const rnd = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let round = 0; round < 50; round++) {
      const a = Array.from({ length: rnd(30) }, () => String.fromCharCode(97 + rnd(5)));
      const b = a.filter(() => rnd(4) !== 0).flatMap((x) => (rnd(5) === 0 ? [x, String.fromCharCode(97 + rnd(5))] : [x]));
      const d = diffLines(a.join('\n'), b.join('\n'));
      assert.deepEqual(d.filter((l) => l.type !== 'add').map((l) => l.text), a);
      assert.deepEqual(d.filter((l) => l.type !== 'del').map((l) => l.text), b);
    }
  });

  it('folds unchanged runs into gaps with context', () => {
    const before = text(40);
    const after = text(40, (i) => (i === 20 ? 'changed' : `line ${i}`));
    const s = diffHunks(before, after, 3);
    assert.equal(s.added, 1);
    assert.equal(s.removed, 1);
    assert.deepEqual(s.rows[0], { type: 'gap', skipped: 16 });
    assert.deepEqual(s.rows[s.rows.length - 1], { type: 'gap', skipped: 17 });
    assert.equal(s.rows.filter((r) => r.type === 'ctx').length, 6);
  });

  it('falls back to a full replacement on huge rewrites', () => {
    const a = text(3000, (i) => `a${i}`);
    const b = text(3000, (i) => `b${i}`);
    const s = diffHunks(a, b);
    assert.equal(s.added, 3000);
    assert.equal(s.removed, 3000);
  });
});
