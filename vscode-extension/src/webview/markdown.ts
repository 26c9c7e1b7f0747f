/**
 * A small, safe markdown renderer for streamed agent answers.
 *
 * Safety: every piece of source text is HTML-escaped before any markup is
 * produced, and the only tags emitted are the ones written here. Link targets
 * are limited to http(s)/mailto URLs and workspace paths (rendered as
 * `data-path` links that the webview turns into "open file" requests).
 *
 * Supports: fenced code blocks (an unclosed fence renders while streaming),
 * inline code, bold, italic, strikethrough, headings, bullet/numbered lists
 * (nested by indentation, task boxes), block quotes, tables, rules, links and
 * bare URLs.
 */

export function escapeHtml(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const SAFE_SCHEMES = /^(https?:|mailto:)/i;
const ANY_SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/** An `<a>` for a link target, or null when the target is unsafe. */
function linkOpen(rawHref: string): string | null {
  const href = rawHref.trim();
  if (SAFE_SCHEMES.test(href)) return `<a href="${escapeHtml(href)}" title="${escapeHtml(href)}">`;
  if (ANY_SCHEME.test(href) && !/^file:/i.test(href)) return null; // javascript:, data:, vscode: …
  const path = href.replace(/^file:\/\//i, '');
  const m = /^(.*?)(?:#L?(\d+)|:(\d+))?$/.exec(path);
  const file = m?.[1] ?? path;
  const line = m?.[2] ?? m?.[3];
  return `<a href="#" class="file-link" data-path="${escapeHtml(file)}"${line ? ` data-line="${line}"` : ''} title="${escapeHtml(path)}">`;
}

/** Inline markup over one line of raw (unescaped) text. */
export function renderInline(src: string): string {
  const slots: string[] = [];
  const hold = (html: string): string => `\u0000${slots.push(html) - 1}\u0000`;
  let s = src.replace(/\u0000/g, '');

  // Code spans first: their content is literal.
  s = s.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (_m, _ticks: string, code: string) => {
    const body = code.length > 2 && code.startsWith(' ') && code.endsWith(' ') ? code.slice(1, -1) : code;
    return hold(`<code>${escapeHtml(body)}</code>`);
  });
  // Links [text](target "title")
  s = s.replace(/\[([^\]\n]+)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g, (_m, text: string, href: string) => {
    const open = linkOpen(href);
    if (!open) return hold(escapeHtml(text));
    return hold(`${open}${renderEmphasis(escapeHtml(text))}</a>`);
  });
  // Bare URLs
  s = s.replace(/\bhttps?:\/\/[^\s<>()\u0000]+[^\s<>()\u0000.,;:!?'"*_~]/g, (url) => hold(`${linkOpen(url)}${escapeHtml(url)}</a>`));

  s = renderEmphasis(escapeHtml(s));
  return s.replace(/\u0000(\d+)\u0000/g, (_m, i: string) => slots[Number(i)] ?? '');
}

/** Bold / italic / strikethrough over already-escaped text. */
function renderEmphasis(s: string): string {
  return s
    .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^\w])__(?=\S)([\s\S]*?\S)__(?!\w)/g, '$1<strong>$2</strong>')
    .replace(/(^|[^*\w])\*(?=[^\s*])([^*]*?[^\s*])\*(?!\*)/g, '$1<em>$2</em>')
    .replace(/(^|[^\w])_(?=[^\s_])([^_]*?[^\s_])_(?!\w)/g, '$1<em>$2</em>')
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, '<del>$1</del>');
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;
const TABLE_SEP = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;

function isBlockStart(line: string): boolean {
  return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || LIST_ITEM.test(line) || QUOTE.test(line);
}

function splitRow(line: string): string[] {
  let t = line.trim();
  if (t.startsWith('|')) t = t.slice(1);
  if (t.endsWith('|') && !t.endsWith('\\|')) t = t.slice(0, -1);
  return t.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
}

function renderCodeBlock(lang: string, code: string, open: boolean): string {
  const safeLang = lang.replace(/[^\w+#.-]/g, '');
  return (
    `<div class="code-block${open ? ' streaming' : ''}">` +
    `<div class="code-head"><span class="code-lang">${escapeHtml(safeLang || 'text')}</span>` +
    `<button class="code-copy" type="button" data-copy title="Copy code">Copy</button></div>` +
    `<pre><code${safeLang ? ` class="language-${escapeHtml(safeLang)}"` : ''}>${escapeHtml(code)}</code></pre></div>`
  );
}

interface ListLine {
  indent: number;
  ordered: boolean;
  start: number;
  text: string;
}

function renderList(items: ListLine[]): string {
  let html = '';
  let i = 0;
  const renderLevel = (baseIndent: number): string => {
    const first = items[i]!;
    const ordered = first.ordered;
    let out = ordered && first.start !== 1 ? `<ol start="${first.start}">` : ordered ? '<ol>' : '<ul>';
    while (i < items.length && items[i]!.indent >= baseIndent) {
      const item = items[i]!;
      if (item.indent > baseIndent) {
        out += renderLevel(item.indent);
        continue;
      }
      if (item.ordered !== ordered) break; // "- a" then "1. b" are two lists
      i++;
      let text = item.text;
      let box = '';
      const task = /^\[([ xX])\]\s+(.*)$/.exec(text);
      if (task) {
        box = `<span class="task-box${task[1] !== ' ' ? ' done' : ''}" aria-hidden="true"></span>`;
        text = task[2]!;
      }
      let inner = box + renderInline(text);
      if (i < items.length && items[i]!.indent > baseIndent) inner += renderLevel(items[i]!.indent);
      out += `<li${task ? ' class="task"' : ''}>${inner}</li>`;
    }
    return out + (ordered ? '</ol>' : '</ul>');
  };
  while (i < items.length) html += renderLevel(items[i]!.indent);
  return html;
}

/** Render markdown source to HTML. */
export function renderMarkdown(source: string): string {
  const lines = source.replace(/\r\n?/g, '\n').replace(/\u0000/g, '').split('\n');
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === '') {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[1]!;
      const body: string[] = [];
      i++;
      let closed = false;
      while (i < lines.length) {
        const l = lines[i]!;
        const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(l);
        if (close && close[1]![0] === marker[0] && close[1]!.length >= marker.length) {
          closed = true;
          i++;
          break;
        }
        body.push(l);
        i++;
      }
      out.push(renderCodeBlock(fence[2] ?? '', body.join('\n'), !closed));
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const level = Math.min(heading[1]!.length + 2, 6); // chat-sized: # → h3
      out.push(`<h${level}>${renderInline(heading[2]!)}</h${level}>`);
      i++;
      continue;
    }
    if (RULE.test(line)) {
      out.push('<hr>');
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const body: string[] = [];
      while (i < lines.length && lines[i]!.trim() !== '' && (QUOTE.test(lines[i]!) || !isBlockStart(lines[i]!))) {
        const q = QUOTE.exec(lines[i]!);
        body.push(q ? q[1]! : lines[i]!);
        i++;
      }
      out.push(`<blockquote>${renderMarkdown(body.join('\n'))}</blockquote>`);
      continue;
    }
    if (LIST_ITEM.test(line)) {
      const items: ListLine[] = [];
      while (i < lines.length) {
        const l = lines[i]!;
        const m = LIST_ITEM.exec(l);
        if (m) {
          const marker = m[2]!;
          items.push({
            indent: m[1]!.replace(/\t/g, '    ').length,
            ordered: /\d/.test(marker),
            start: /\d/.test(marker) ? parseInt(marker, 10) : 1,
            text: m[3]!,
          });
          i++;
        } else if (l.trim() !== '' && /^\s+/.test(l) && items.length && !FENCE.test(l)) {
          items[items.length - 1]!.text += ' ' + l.trim(); // continuation line
          i++;
        } else if (l.trim() === '' && i + 1 < lines.length && LIST_ITEM.test(lines[i + 1]!)) {
          i++; // loose list: a blank line between items
        } else break;
      }
      out.push(renderList(items));
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1]!) && lines[i + 1]!.includes('-')) {
      const head = splitRow(line);
      const aligns = splitRow(lines[i + 1]!).map((c) =>
        c.startsWith(':') && c.endsWith(':') ? 'center' : c.endsWith(':') ? 'right' : c.startsWith(':') ? 'left' : '',
      );
      i += 2;
      const rows: string[][] = [];
      while (i < lines.length && lines[i]!.includes('|') && lines[i]!.trim() !== '') rows.push(splitRow(lines[i++]!));
      const cell = (tag: string, text: string, col: number): string =>
        `<${tag}${aligns[col] ? ` style="text-align:${aligns[col]}"` : ''}>${renderInline(text)}</${tag}>`;
      out.push(
        '<div class="table-wrap"><table><thead><tr>' +
          head.map((h, c) => cell('th', h, c)).join('') +
          '</tr></thead><tbody>' +
          rows.map((r) => '<tr>' + head.map((_h, c) => cell('td', r[c] ?? '', c)).join('') + '</tr>').join('') +
          '</tbody></table></div>',
      );
      continue;
    }
    // Paragraph: consecutive lines until a blank line or another block.
    const para: string[] = [];
    while (i < lines.length && lines[i]!.trim() !== '' && (para.length === 0 || !isBlockStart(lines[i]!))) {
      para.push(lines[i]!);
      i++;
    }
    // A trailing double space or backslash is a hard break; other newlines are kept as soft breaks.
    out.push(`<p>${para.map((l) => renderInline(l.replace(/( {2,}|\\)$/, ''))).join('<br>')}</p>`);
  }
  return out.join('\n');
}
