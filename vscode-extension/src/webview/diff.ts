/**
 * Line diff for edit previews (ACP `diff` content: oldText → newText).
 * Myers' O(ND) algorithm after trimming the common prefix and suffix; very
 * large rewrites fall back to "remove all, add all".
 */

export type DiffLine =
  | { type: 'ctx'; text: string; oldNo: number; newNo: number }
  | { type: 'del'; text: string; oldNo: number }
  | { type: 'add'; text: string; newNo: number };

export type DiffRow = DiffLine | { type: 'gap'; skipped: number };

export interface DiffSummary {
  rows: DiffRow[];
  added: number;
  removed: number;
  /** True when the old text was absent (a new file). */
  created: boolean;
}

export function splitLines(text: string | null | undefined): string[] {
  if (!text) return [];
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Beyond this many differences the edit is shown as a full replacement. */
const MAX_EDIT_DISTANCE = 1000;

type Op = 'ctx' | 'del' | 'add';

/** Edit script between a and b (arrays of lines). */
function myers(a: string[], b: string[]): Op[] | null {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, MAX_EDIT_DISTANCE);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    const next = v; // updated in place; trace holds the snapshots
    for (let k = -d; k <= d; k += 2) {
      let x: number;
      if (k === -d || (k !== d && next[offset + k - 1]! < next[offset + k + 1]!)) x = next[offset + k + 1]!;
      else x = next[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      next[offset + k] = x;
      if (x >= n && y >= m) {
        return backtrack(trace, offset, n, m, d);
      }
    }
  }
  return null;
}

function backtrack(trace: Int32Array[], offset: number, n: number, m: number, dEnd: number): Op[] {
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = dEnd; d > 0; d--) {
    const prev = trace[d]!; // V as it was before step d
    const k = x - y;
    let prevK: number;
    if (k === -d || (k !== d && prev[offset + k - 1]! < prev[offset + k + 1]!)) prevK = k + 1;
    else prevK = k - 1;
    const prevX = prev[offset + prevK]!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push('ctx');
      x--;
      y--;
    }
    if (x === prevX) {
      ops.push('add');
      y--;
    } else {
      ops.push('del');
      x--;
    }
  }
  while (x > 0 && y > 0) {
    ops.push('ctx');
    x--;
    y--;
  }
  return ops.reverse();
}

/** Every line of the diff, in order. */
export function diffLines(oldText: string | null | undefined, newText: string | null | undefined): DiffLine[] {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const midA = a.slice(pre, a.length - suf);
  const midB = b.slice(pre, b.length - suf);
  let ops = myers(midA, midB);
  if (!ops) ops = [...midA.map((): Op => 'del'), ...midB.map((): Op => 'add')];

  const out: DiffLine[] = [];
  let oi = 0;
  let ni = 0;
  for (let i = 0; i < pre; i++) out.push({ type: 'ctx', text: a[i]!, oldNo: ++oi, newNo: ++ni });
  let ai = pre;
  let bi = pre;
  for (const op of ops) {
    if (op === 'ctx') {
      out.push({ type: 'ctx', text: a[ai++]!, oldNo: ++oi, newNo: ++ni });
      bi++;
    } else if (op === 'del') out.push({ type: 'del', text: a[ai++]!, oldNo: ++oi });
    else out.push({ type: 'add', text: b[bi++]!, newNo: ++ni });
  }
  for (let i = 0; i < suf; i++) out.push({ type: 'ctx', text: a[ai++]!, oldNo: ++oi, newNo: ++ni });
  return out;
}

/** The diff with unchanged runs folded to `context` lines around each change. */
export function diffHunks(oldText: string | null | undefined, newText: string | null | undefined, context = 3): DiffSummary {
  const lines = diffLines(oldText, newText);
  const rows: DiffRow[] = [];
  let added = 0;
  let removed = 0;
  const changed = lines.map((l) => l.type !== 'ctx');
  for (const l of lines) {
    if (l.type === 'add') added++;
    else if (l.type === 'del') removed++;
  }
  // keep[i]: within `context` lines of a change
  const keep = new Array<boolean>(lines.length).fill(false);
  let lastChange = -Infinity;
  for (let i = 0; i < lines.length; i++) {
    if (changed[i]) lastChange = i;
    if (i - lastChange <= context) keep[i] = true;
  }
  lastChange = Infinity;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (changed[i]) lastChange = i;
    if (lastChange - i <= context) keep[i] = true;
  }
  let skipped = 0;
  for (let i = 0; i < lines.length; i++) {
    if (keep[i]) {
      if (skipped) rows.push({ type: 'gap', skipped });
      skipped = 0;
      rows.push(lines[i]!);
    } else skipped++;
  }
  if (skipped) rows.push({ type: 'gap', skipped });
  return { rows, added, removed, created: oldText == null };
}
