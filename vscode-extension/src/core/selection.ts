/**
 * "Ask about selection": the prompt as `ContentBlock[]` — a text block with the
 * question and where the selection is, plus a `resource` block holding the
 * selected text. No `vscode` import.
 */

import type { ContentBlock } from '../acp';

export interface SelectionContext {
  question: string;
  /** Document URI (file:///…). */
  uri: string;
  /** Workspace-relative path for display. */
  relativePath: string;
  languageId: string;
  text: string;
  /** 0-based, as VS Code reports it. */
  range: { startLine: number; startCharacter: number; endLine: number; endCharacter: number };
}

const MIME: Record<string, string> = {
  python: 'text/x-python',
  typescript: 'text/x-typescript',
  typescriptreact: 'text/x-typescript',
  javascript: 'text/javascript',
  javascriptreact: 'text/javascript',
  json: 'application/json',
  jsonc: 'application/json',
  markdown: 'text/markdown',
  html: 'text/html',
  css: 'text/css',
  rust: 'text/x-rust',
  go: 'text/x-go',
  java: 'text/x-java',
  c: 'text/x-c',
  cpp: 'text/x-c++',
  csharp: 'text/x-csharp',
  shellscript: 'text/x-shellscript',
  yaml: 'application/yaml',
  toml: 'application/toml',
  xml: 'application/xml',
  sql: 'application/sql',
  ruby: 'text/x-ruby',
  php: 'text/x-php',
  lua: 'text/x-lua',
};

export function mimeTypeFor(languageId: string): string {
  return MIME[languageId] ?? 'text/plain';
}

/** "src/app.py lines 10–14" (1-based, inclusive). */
export function describeRange(ctx: SelectionContext): string {
  const { startLine, endLine, endCharacter } = ctx.range;
  // A selection ending at column 0 of the next line ends on the line before.
  const last = endCharacter === 0 && endLine > startLine ? endLine - 1 : endLine;
  const a = startLine + 1;
  const b = last + 1;
  return a === b ? `${ctx.relativePath} line ${a}` : `${ctx.relativePath} lines ${a}–${b}`;
}

export function buildSelectionPrompt(ctx: SelectionContext): ContentBlock[] {
  const r = ctx.range;
  const where =
    `Selection: ${describeRange(ctx)} ` +
    `(range ${r.startLine + 1}:${r.startCharacter + 1}-${r.endLine + 1}:${r.endCharacter + 1}, ${ctx.languageId}).`;
  const question = ctx.question.trim() || 'Explain this code.';
  return [
    { type: 'text', text: `${question}\n\n${where}` },
    { type: 'resource', resource: { uri: ctx.uri, text: ctx.text, mimeType: mimeTypeFor(ctx.languageId) } },
  ];
}
