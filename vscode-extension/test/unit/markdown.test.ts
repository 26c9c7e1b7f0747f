import assert from 'node:assert/strict';
import { escapeHtml, renderInline, renderMarkdown } from '../../src/webview/markdown';

describe('markdown renderer', () => {
  it('escapes HTML before anything else', () => {
    const html = renderMarkdown('<script>alert(1)</script> & <img src=x onerror=alert(1)>');
    assert.ok(!html.includes('<script>'));
    assert.ok(!html.includes('<img'));
    assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;img'));
  });

  it('escapes quotes', () => {
    assert.equal(escapeHtml(`"a" 'b'`), '&quot;a&quot; &#39;b&#39;');
  });

  it('renders bold, italic, strikethrough and inline code', () => {
    assert.equal(renderInline('**bold** and *it* and _it2_ and ~~gone~~'), '<strong>bold</strong> and <em>it</em> and <em>it2</em> and <del>gone</del>');
    assert.equal(renderInline('use `a < b && *c*`'), 'use <code>a &lt; b &amp;&amp; *c*</code>');
  });

  it('leaves snake_case and arithmetic alone', () => {
    assert.equal(renderInline('call my_func_name now'), 'call my_func_name now');
    assert.equal(renderInline('2 * 3 * 4'), '2 * 3 * 4');
  });

  it('renders fenced code blocks with the language and escaped content', () => {
    const html = renderMarkdown('Here:\n\n```python\nif a < b:\n    print("**x**")\n```\nafter');
    assert.match(html, /<span class="code-lang">python<\/span>/);
    assert.match(html, /<code class="language-python">if a &lt; b:\n    print\(&quot;\*\*x\*\*&quot;\)<\/code>/);
    assert.ok(!html.includes('<strong>'));
    assert.match(html, /<p>after<\/p>/);
  });

  it('renders an unclosed fence while streaming', () => {
    const html = renderMarkdown('```ts\nconst a = 1;');
    assert.match(html, /code-block streaming/);
    assert.match(html, /const a = 1;/);
  });

  it('renders bullet, numbered, nested and task lists', () => {
    const html = renderMarkdown('- one\n- two\n  - nested\n- [x] done\n\n3. three\n4. four');
    assert.match(html, /<ul><li>one<\/li><li>two<ul><li>nested<\/li><\/ul><\/li><li class="task"><span class="task-box done"/);
    assert.match(html, /<ol start="3"><li>three<\/li><li>four<\/li><\/ol>/);
  });

  it('renders safe links and drops dangerous ones', () => {
    assert.match(renderInline('[docs](https://example.com/a?b=1&c=2)'), /<a href="https:\/\/example.com\/a\?b=1&amp;c=2"/);
    const js = renderInline('[click](javascript:alert(1))');
    assert.ok(!js.includes('<a'), js);
    assert.ok(!js.includes('javascript'), js);
    assert.ok(!renderInline('[x](data:text/html,hi)').includes('<a'));
  });

  it('turns workspace paths into file links with a line', () => {
    const html = renderInline('[app](src/app.py#L12)');
    assert.match(html, /class="file-link" data-path="src\/app.py" data-line="12"/);
  });

  it('autolinks bare URLs without trailing punctuation', () => {
    assert.match(renderInline('see https://example.com/x.'), /<a href="https:\/\/example.com\/x"[^>]*>https:\/\/example.com\/x<\/a>\.$/);
  });

  it('renders headings, quotes, rules and tables', () => {
    const html = renderMarkdown('# Title\n> quoted\n\n---\n\n| a | b |\n|---|:-:|\n| 1 | `2` |');
    assert.match(html, /<h3>Title<\/h3>/);
    assert.match(html, /<blockquote><p>quoted<\/p><\/blockquote>/);
    assert.match(html, /<hr>/);
    assert.match(html, /<th>a<\/th><th style="text-align:center">b<\/th>/);
    assert.match(html, /<td>1<\/td><td style="text-align:center"><code>2<\/code><\/td>/);
  });

  it('keeps line breaks inside a paragraph', () => {
    assert.equal(renderMarkdown('one\ntwo'), '<p>one<br>two</p>');
  });

  it('does not let placeholder characters in input inject slots', () => {
    const html = renderMarkdown('\u00000\u0000 `x`');
    assert.equal(html, '<p>0 <code>x</code></p>');
  });
});
