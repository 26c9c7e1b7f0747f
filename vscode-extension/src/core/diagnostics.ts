/**
 * `agent/diagnostics`: the problems VS Code shows, in LSP's shape, after the language servers have
 * caught up with the agent's latest edit. No `vscode` import: the extension feeds the events
 * (document changed, diagnostics changed) and reads the diagnostics; the tests feed their own.
 *
 * Settling: an edit changes a document, its language servers re-check it and publish new
 * diagnostics a little later. A file counts as settled once a diagnostics change arrived after its
 * last edit and nothing more arrived for `quietMs`. The wait is bounded by the request's
 * `settleMs`, and by `unknownMs` for a language that has never had a diagnostic in this window
 * (a plain-text file has no language server to wait for).
 */

export interface DiagnosticsParams {
  sessionId?: string;
  uris: string[];
  /** How long at most to wait for the language servers after an edit (0: answer at once). */
  settleMs?: number;
}

export interface WireDiagnostic {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  severity: 1 | 2 | 3 | 4;
  message: string;
  source?: string;
  code?: string;
}

export interface DiagnosticsResult {
  diagnostics: { uri: string; diagnostics: WireDiagnostic[] }[];
}

/** A `vscode.Diagnostic` as far as this module needs it (severity: Error 0 … Hint 3). */
export interface EditorDiagnostic {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  severity: number;
  message: string;
  source?: string;
  code?: string | number | { value: string | number } | undefined;
}

export const MAX_PER_FILE = 200;
export const MAX_SETTLE_MS = 10_000;

export function toWire(d: EditorDiagnostic): WireDiagnostic {
  const severity = Math.min(4, Math.max(1, Math.round(Number(d.severity) || 0) + 1)) as WireDiagnostic['severity'];
  const out: WireDiagnostic = {
    range: {
      start: { line: d.range.start.line, character: d.range.start.character },
      end: { line: d.range.end.line, character: d.range.end.character },
    },
    severity,
    message: String(d.message),
  };
  if (d.source) out.source = String(d.source);
  const code = typeof d.code === 'object' && d.code !== null ? d.code.value : d.code;
  if (code !== undefined && code !== '') out.code = String(code);
  return out;
}

/** Errors first, then by position; at most `MAX_PER_FILE`. */
export function wireList(diags: readonly EditorDiagnostic[]): WireDiagnostic[] {
  return diags
    .map(toWire)
    .sort((a, b) => a.severity - b.severity || a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character)
    .slice(0, MAX_PER_FILE);
}

export function isDiagnosticsParams(value: unknown): value is DiagnosticsParams {
  if (!value || typeof value !== 'object') return false;
  const p = value as { uris?: unknown; settleMs?: unknown };
  return Array.isArray(p.uris) && p.uris.every((u) => typeof u === 'string') && (p.settleMs === undefined || typeof p.settleMs === 'number');
}

export interface WatchOptions {
  now?: () => number;
  quietMs?: number;
  unknownMs?: number;
}

/** Tracks edits and diagnostics changes per document URI, to wait for the language servers. */
export class DiagnosticsWatch {
  // Events are ordered by a counter (two can share a millisecond); the report's time is for the quiet period.
  private seq = 0;
  private readonly lastEdit = new Map<string, number>();
  private readonly lastReport = new Map<string, { seq: number; at: number }>();
  private readonly languages = new Set<string>();
  private readonly waiters = new Set<() => void>();
  private readonly now: () => number;
  private readonly quietMs: number;
  private readonly unknownMs: number;

  constructor(options: WatchOptions = {}) {
    this.now = options.now ?? (() => Date.now());
    this.quietMs = options.quietMs ?? 150;
    this.unknownMs = options.unknownMs ?? 400;
  }

  documentChanged(uri: string): void {
    this.lastEdit.set(uri, ++this.seq);
  }

  diagnosticsChanged(uris: readonly string[], languageOf: (uri: string) => string | undefined): void {
    const report = { seq: ++this.seq, at: this.now() };
    for (const uri of uris) {
      this.lastReport.set(uri, report);
      const lang = languageOf(uri);
      if (lang) this.languages.add(lang);
    }
    for (const wake of [...this.waiters]) wake();
  }

  /** Whether this language has had a diagnostic in this window (so a language server is there). */
  knows(language: string | undefined): boolean {
    return !!language && this.languages.has(language);
  }

  private settled(uri: string): boolean {
    const edit = this.lastEdit.get(uri);
    const report = this.lastReport.get(uri);
    if (edit === undefined) return report === undefined || this.now() - report.at >= this.quietMs;
    return report !== undefined && report.seq > edit && this.now() - report.at >= this.quietMs;
  }

  /** Resolves once every URI is settled, or after `maxMs` (shorter for languages never seen with diagnostics). */
  async settle(uris: readonly string[], maxMs: number, languageOf: (uri: string) => string | undefined): Promise<void> {
    if (maxMs <= 0 || uris.length === 0) return;
    const known = uris.some((u) => this.knows(languageOf(u)));
    const limit = Math.min(MAX_SETTLE_MS, known ? maxMs : Math.min(maxMs, this.unknownMs));
    const deadline = this.now() + limit;
    while (!uris.every((u) => this.settled(u))) {
      const left = deadline - this.now();
      if (left <= 0) return;
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          this.waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(left, this.quietMs));
        this.waiters.add(wake);
      });
    }
  }
}

/** The whole answer: wait (bounded), then read each URI's diagnostics. */
export async function answerDiagnostics(
  params: DiagnosticsParams,
  watch: DiagnosticsWatch,
  read: (uri: string) => readonly EditorDiagnostic[],
  languageOf: (uri: string) => string | undefined,
): Promise<DiagnosticsResult> {
  const uris = [...new Set(params.uris)].slice(0, 100);
  await watch.settle(uris, Math.max(0, Math.min(MAX_SETTLE_MS, params.settleMs ?? 0)), languageOf);
  return { diagnostics: uris.map((uri) => ({ uri, diagnostics: wireList(read(uri)) })) };
}
