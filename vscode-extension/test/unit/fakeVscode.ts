/**
 * A stand-in `vscode` module for smoke-testing the extension host code in
 * Node (VS Code itself cannot run here). The parts the extension uses are
 * real fakes that record calls; everything else is a permissive deep proxy,
 * so vscode-languageclient can start against a real server process.
 */

import Module from 'node:module';
import * as path from 'node:path';

type Fn = (...args: unknown[]) => unknown;

/** Any property is another proxy, any call returns one; not thenable; iterates as empty. */
export function deepProxy(name = 'vscode'): unknown {
  const target = function () {
    /* callable */
  };
  return new Proxy(target, {
    get(_t, prop) {
      if (prop === 'then') return undefined;
      if (prop === Symbol.iterator) return function* () {};
      if (prop === Symbol.toPrimitive) return () => `[${name}]`;
      if (prop === 'toString') return () => `[${name}]`;
      if (prop === 'length') return 0;
      return deepProxy(`${name}.${String(prop)}`);
    },
    apply: () => deepProxy(`${name}()`),
    construct: () => deepProxy(`new ${name}`) as object,
  });
}

export class EventEmitter<T> {
  private listeners: ((e: T) => void)[] = [];
  event = (listener: (e: T) => void) => {
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== listener)) };
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class Uri {
  constructor(
    readonly scheme: string,
    readonly fsPath: string,
  ) {}
  static file(p: string): Uri {
    return new Uri('file', p);
  }
  static parse(s: string): Uri {
    return s.startsWith('file://') ? new Uri('file', decodeURIComponent(s.slice(7))) : new Uri(s.split(':')[0]!, s);
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return new Uri(base.scheme, path.join(base.fsPath, ...parts));
  }
  get path(): string {
    return this.fsPath;
  }
  toString(): string {
    return `${this.scheme}://${this.fsPath}`;
  }
  with(): Uri {
    return this;
  }
}

export interface FakeWebviewView {
  webview: {
    options: unknown;
    html: string;
    cspSource: string;
    posted: unknown[];
    asWebviewUri(u: Uri): Uri;
    postMessage(m: unknown): Promise<boolean>;
    onDidReceiveMessage(l: (m: unknown) => void): { dispose(): void };
    receive(m: unknown): void;
  };
  visible: boolean;
  show(): void;
  onDidDispose(l: () => void): { dispose(): void };
  onDidChangeVisibility(l: () => void): { dispose(): void };
}

export function fakeWebviewView(): FakeWebviewView {
  const incoming = new EventEmitter<unknown>();
  const webview = {
    options: undefined as unknown,
    html: '',
    cspSource: 'vscode-webview://fake',
    posted: [] as unknown[],
    asWebviewUri: (u: Uri) => new Uri('vscode-webview', u.fsPath),
    postMessage(m: unknown) {
      this.posted.push(JSON.parse(JSON.stringify(m)));
      return Promise.resolve(true);
    },
    onDidReceiveMessage: (l: (m: unknown) => void) => incoming.event(l),
    receive: (m: unknown) => incoming.fire(m),
  };
  return {
    webview,
    visible: true,
    show() {},
    onDidDispose: () => ({ dispose() {} }),
    onDidChangeVisibility: () => ({ dispose() {} }),
  };
}

export interface FakeVscode {
  module: Record<string, unknown>;
  commands: Map<string, Fn>;
  executed: unknown[][];
  viewProviders: Map<string, { provider: { resolveWebviewView(v: unknown): void }; options: unknown }>;
  messages: { level: string; args: unknown[] }[];
  settings: Record<string, unknown>;
  terminals: unknown[];
  participants: string[];
  appliedEdits: unknown[];
  /** Open documents (what workspace.textDocuments lists); `saved` counts save() calls. */
  documents: { uri: Uri; isDirty: boolean; saved: number; save(): Promise<boolean>; languageId?: string }[];
  /** What languages.getDiagnostics answers, by URI string; `publish` sets them and fires the event. */
  diagnostics: Map<string, unknown[]>;
  publish(uri: Uri, diagnostics: unknown[]): void;
  /** Fire workspace.onDidChangeTextDocument for this URI. */
  changeDocument(uri: Uri): void;
  /** Called after workspace.applyEdit applied an edit (fires onDidChangeTextDocument first). */
  afterEdit?: (edit: unknown) => void;
}

export function makeFakeVscode(workspaceDir: string): FakeVscode {
  const commands = new Map<string, Fn>();
  const executed: unknown[][] = [];
  const viewProviders = new Map<string, { provider: { resolveWebviewView(v: unknown): void }; options: unknown }>();
  const messages: { level: string; args: unknown[] }[] = [];
  const settings: Record<string, unknown> = {};
  const terminals: unknown[] = [];
  const participants: string[] = [];
  const appliedEdits: unknown[] = [];
  const documents: FakeVscode['documents'] = [];
  const disposable = { dispose() {} };
  const diagnostics = new Map<string, unknown[]>();
  const diagnosticsChanged = new EventEmitter<{ uris: Uri[] }>();
  const documentChanged = new EventEmitter<{ document: unknown; contentChanges: unknown[] }>();
  const state = {} as { afterEdit?: (edit: unknown) => void };
  const message = (level: string) => (...args: unknown[]) => {
    messages.push({ level, args });
    return Promise.resolve(undefined);
  };
  const outputChannel = () => {
    const ch = deepProxy('outputChannel') as Record<string, unknown>;
    return new Proxy(ch, {
      get: (t, p) => (['info', 'warn', 'error', 'debug', 'trace', 'appendLine', 'append', 'show', 'clear', 'dispose', 'replace'].includes(String(p)) ? () => undefined : p === 'name' ? 'agentls' : p === 'logLevel' ? 2 : Reflect.get(t, p)),
    });
  };
  const configuration = (section?: string) => ({
    get: (key: string, def?: unknown) => settings[`${section}.${key}`] ?? def,
    inspect: (key: string) => (`${section}.${key}` in settings ? { key, globalValue: settings[`${section}.${key}`] } : { key }),
    has: (key: string) => `${section}.${key}` in settings,
    update: () => Promise.resolve(),
  });
  const folder = { uri: Uri.file(workspaceDir), name: 'ws', index: 0 };
  const base = {
    Uri,
    EventEmitter,
    Disposable: class {
      static from() {
        return disposable;
      }
      constructor(private readonly fn?: () => void) {}
      dispose() {
        this.fn?.();
      }
    },
    ThemeIcon: class {
      constructor(readonly id: string) {}
    },
    Position: class {
      constructor(
        readonly line: number,
        readonly character: number,
      ) {}
    },
    Range: class {
      constructor(
        readonly start: unknown,
        readonly end: unknown,
      ) {}
    },
    StatusBarAlignment: { Left: 1, Right: 2 },
    ViewColumn: { One: 1, Active: -1, Beside: -2 },
    commands: {
      registerCommand: (id: string, fn: Fn) => {
        commands.set(id, fn);
        return disposable;
      },
      executeCommand: (...args: unknown[]) => {
        executed.push(args);
        return Promise.resolve(undefined);
      },
    },
    window: {
      createOutputChannel: outputChannel,
      createStatusBarItem: () => ({ text: '', tooltip: '', command: '', show() {}, hide() {}, dispose() {} }),
      registerWebviewViewProvider: (id: string, provider: { resolveWebviewView(v: unknown): void }, options: unknown) => {
        viewProviders.set(id, { provider, options });
        return disposable;
      },
      showInformationMessage: message('info'),
      showWarningMessage: message('warning'),
      showErrorMessage: message('error'),
      showInputBox: () => Promise.resolve(undefined),
      createTerminal: (opts: unknown) => {
        terminals.push(opts);
        return { show() {}, dispose() {}, exitStatus: undefined };
      },
      activeTextEditor: undefined,
      visibleTextEditors: [],
      onDidChangeActiveTextEditor: () => disposable,
      onDidChangeVisibleTextEditors: () => disposable,
      onDidChangeTextEditorSelection: () => disposable,
    },
    languages: {
      getDiagnostics: (uri: Uri) => diagnostics.get(uri.toString()) ?? [],
      onDidChangeDiagnostics: (l: (e: { uris: Uri[] }) => void) => diagnosticsChanged.event(l),
    },
    workspace: {
      workspaceFolders: [folder],
      getWorkspaceFolder: () => folder,
      getConfiguration: configuration,
      onDidChangeConfiguration: () => disposable,
      onDidOpenTextDocument: () => disposable,
      onDidChangeTextDocument: (l: (e: { document: unknown; contentChanges: unknown[] }) => void) => documentChanged.event(l),
      onDidCreateFiles: () => disposable,
      onDidDeleteFiles: () => disposable,
      onDidRenameFiles: () => disposable,
      findFiles: () => Promise.resolve([]),
      onDidCloseTextDocument: () => disposable,
      onDidSaveTextDocument: () => disposable,
      onWillSaveTextDocument: () => disposable,
      onDidChangeWorkspaceFolders: () => disposable,
      get textDocuments() {
        return documents;
      },
      applyEdit: (edit: unknown) => {
        appliedEdits.push(edit);
        state.afterEdit?.(edit); // e.g. the test's changeDocument, as VS Code changes documents before resolving
        return Promise.resolve(true);
      },
      notebookDocuments: [],
      asRelativePath: (p: string) => p,
    },
    chat: {
      createChatParticipant: (id: string) => {
        participants.push(id);
        return { iconPath: undefined, dispose() {} };
      },
    },
    env: { language: 'en', appName: 'Fake Code', machineId: 'fake', sessionId: 'fake', uiKind: 1 },
    version: '1.95.0',
  };
  const module = new Proxy(base as Record<string, unknown>, {
    // __esModule keeps __importStar from copying only the own keys (classes like CompletionItem come from the proxy).
    get: (t, p) => (p in t ? t[p as string] : p === '__esModule' ? true : p === 'then' ? undefined : deepProxy(`vscode.${String(p)}`)),
  });
  const publish = (uri: Uri, list: unknown[]): void => {
    diagnostics.set(uri.toString(), list);
    diagnosticsChanged.fire({ uris: [uri] });
  };
  const changeDocument = (uri: Uri): void => documentChanged.fire({ document: { uri }, contentChanges: [{}] });
  const fake: FakeVscode = { module, commands, executed, viewProviders, messages, settings, terminals, participants, appliedEdits, documents, diagnostics, publish, changeDocument };
  Object.defineProperty(fake, 'afterEdit', { get: () => state.afterEdit, set: (f) => (state.afterEdit = f) });
  return fake;
}

/** Make `require('vscode')` return `fake` until the returned function is called. */
export function installVscode(fake: Record<string, unknown>): () => void {
  const M = Module as unknown as { _load: (req: string, parent: unknown, isMain: boolean) => unknown };
  const original = M._load;
  M._load = function (req: string, parent: unknown, isMain: boolean) {
    if (req === 'vscode') return fake;
    return original.call(this, req, parent, isMain);
  };
  return () => {
    M._load = original;
  };
}
