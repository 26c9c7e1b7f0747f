/**
 * What VS Code shows, for the agent: the diagnostics (`agent/diagnostics`, settled after edits), the
 * active file and selection, and the workspace files for `@` mentions. Thin: the logic is in
 * core/diagnostics.ts and core/context.ts.
 */

import * as vscode from 'vscode';
import {
  DiagnosticsWatch,
  answerDiagnostics,
  isDiagnosticsParams,
  type DiagnosticsResult,
} from './core/diagnostics';
import { describeContext, rankFiles, type EditorContext, type Mention } from './core/context';

const EXCLUDE = '{**/node_modules/**,**/.git/**,**/.venv/**,**/__pycache__/**,**/dist/**,**/out/**,**/build/**}';
const FILE_CACHE_MS = 10_000;
const MAX_FILES = 20_000;
const MAX_SELECTION = 100_000; // characters sent; the server cuts further

export class EditorState implements vscode.Disposable {
  private readonly watch = new DiagnosticsWatch();
  private readonly subscriptions: vscode.Disposable[] = [];
  private files: { at: number; list: Promise<vscode.Uri[]> } | undefined;
  private labelTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly onContextLabel: (label: string | null) => void) {
    this.subscriptions.push(
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.contentChanges.length) this.watch.documentChanged(e.document.uri.toString());
      }),
      vscode.languages.onDidChangeDiagnostics((e) =>
        this.watch.diagnosticsChanged(
          e.uris.map((u) => u.toString()),
          (u) => this.languageOf(u),
        ),
      ),
      vscode.window.onDidChangeActiveTextEditor(() => this.contextChanged()),
      vscode.window.onDidChangeTextEditorSelection(() => this.contextChanged()),
      vscode.workspace.onDidCreateFiles(() => (this.files = undefined)),
      vscode.workspace.onDidDeleteFiles(() => (this.files = undefined)),
      vscode.workspace.onDidRenameFiles(() => (this.files = undefined)),
    );
    this.contextChanged();
  }

  dispose(): void {
    clearTimeout(this.labelTimer);
    for (const s of this.subscriptions) s.dispose();
  }

  private languageOf(uri: string): string | undefined {
    return vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri)?.languageId;
  }

  /** `agent/diagnostics`: the problems of each URI, after a bounded wait for the language servers. */
  async diagnostics(params: unknown): Promise<DiagnosticsResult> {
    if (!isDiagnosticsParams(params)) return { diagnostics: [] };
    // The server's URIs and VS Code's spellings of them may differ in their escaping: match on VS Code's.
    const originals = new Map<string, string>();
    for (const uri of params.uris) originals.set(vscode.Uri.parse(uri).toString(), uri);
    const result = await answerDiagnostics(
      { ...params, uris: [...originals.keys()] },
      this.watch,
      (uri) => vscode.languages.getDiagnostics(vscode.Uri.parse(uri)),
      (uri) => this.languageOf(uri),
    );
    return { diagnostics: result.diagnostics.map((d) => ({ ...d, uri: originals.get(d.uri) ?? d.uri })) };
  }

  /** The active file, and the selection when there is one. */
  editorContext(): EditorContext | undefined {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.uri.scheme !== 'file') return undefined;
    const doc = editor.document;
    const path = doc.uri.fsPath;
    const active = editor.selection.active;
    const ctx: EditorContext = {
      activeFile: { path, languageId: doc.languageId, cursor: { line: active.line, character: active.character } },
    };
    const sel = editor.selection;
    if (!sel.isEmpty) {
      ctx.selection = {
        path,
        languageId: doc.languageId,
        text: doc.getText(sel).slice(0, MAX_SELECTION),
        range: {
          start: { line: sel.start.line, character: sel.start.character },
          end: { line: sel.end.line, character: sel.end.character },
        },
      };
    }
    return ctx;
  }

  private contextChanged(): void {
    clearTimeout(this.labelTimer);
    this.labelTimer = setTimeout(() => {
      this.onContextLabel(describeContext(this.editorContext(), (p) => vscode.workspace.asRelativePath(p, false)));
    }, 100);
  }

  /** Workspace files for an `@` mention, best first. */
  async findFiles(query: string): Promise<Mention[]> {
    if (!this.files || Date.now() - this.files.at > FILE_CACHE_MS) {
      this.files = { at: Date.now(), list: Promise.resolve(vscode.workspace.findFiles('**/*', EXCLUDE, MAX_FILES)) };
    }
    const uris = await this.files.list;
    const byPath = new Map(uris.map((u) => [vscode.workspace.asRelativePath(u, false), u] as const));
    return rankFiles([...byPath.keys()], query).map((path) => ({ path, uri: byPath.get(path)!.toString() }));
  }
}
