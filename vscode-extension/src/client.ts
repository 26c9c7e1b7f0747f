/**
 * The `agentls lsp` language client: start/stop/restart, the client
 * capability, and the server → client requests. Thin by design: the request
 * handlers delegate to the controller and the terminal manager.
 */

import * as vscode from 'vscode';
import {
  CancellationToken,
  LanguageClient,
  ResponseError,
  State,
  type FeatureState,
  type LanguageClientOptions,
  type ServerOptions,
  type StaticFeature,
  type ClientCapabilities,
} from 'vscode-languageclient/node';
import { Methods, type AgentUpdateParams, type RequestPermissionParams, type RequestPermissionResult } from './acp';
import type { AgentRequester, CancellationLike } from './core/controller';
import { editedUris } from './core/edits';
import { buildInitializationOptions, effectiveSetting, fillAgentCapabilities, serverCommand, type SettingReader } from './core/settings';
import { TerminalError, type TerminalManager } from './core/terminals';
import type { DiagnosticsResult } from './core/diagnostics';
import type { ServerState } from './protocol';

/** Declares `experimental.agent` {terminal, permissions, updates} in the client capabilities. */
class AgentCapabilityFeature implements StaticFeature {
  serverAgentCapabilities: unknown;

  fillClientCapabilities(capabilities: ClientCapabilities): void {
    fillAgentCapabilities(capabilities);
  }

  initialize(capabilities: { experimental?: unknown }): void {
    const exp = capabilities.experimental as { agent?: unknown } | undefined;
    this.serverAgentCapabilities = exp?.agent;
  }

  getState(): FeatureState {
    return { kind: 'static' };
  }

  clear(): void {
    this.serverAgentCapabilities = undefined;
  }
}

export interface ServerHandlers {
  onUpdate(params: AgentUpdateParams): void;
  /** `agent/diagnostics`: the problems VS Code shows for the given URIs. */
  diagnostics(params: unknown): Promise<DiagnosticsResult>;
  requestPermission(params: RequestPermissionParams, token: CancellationLike): Promise<RequestPermissionResult>;
  terminals: TerminalManager;
  onState(state: ServerState, message?: string, model?: string): void;
}

/** Only values the user set (any scope) — defaults stay with the server. */
export function settingReader(): SettingReader {
  const cfg = vscode.workspace.getConfiguration('agentls');
  const trusted = vscode.workspace.isTrusted;
  return (key) => effectiveSetting(cfg.inspect(key), key, trusted);
}

async function saveDocuments(uris: string[]): Promise<void> {
  const paths = new Set(uris.map((u) => vscode.Uri.parse(u).fsPath));
  await Promise.all(
    vscode.workspace.textDocuments.filter((d) => d.isDirty && paths.has(d.uri.fsPath)).map((d) => d.save().then(undefined, () => false)),
  );
}

export class AgentServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient> | undefined;
  private readonly feature = new AgentCapabilityFeature();

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly handlers: ServerHandlers,
  ) {}

  /** The running client, started on first use. */
  async connection(): Promise<AgentRequester> {
    const client = await (this.starting ?? this.start());
    return {
      request: <R>(method: string, params: unknown) => client.sendRequest<R>(method, params),
    };
  }

  /** For callers that pass a cancellation token (the chat participant). */
  async request<R>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R> {
    const client = await (this.starting ?? this.start());
    return client.sendRequest<R>(method, params, token);
  }

  start(): Promise<LanguageClient> {
    this.starting ??= this.doStart().catch((err: unknown) => {
      this.starting = undefined;
      throw err;
    });
    return this.starting;
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.starting = undefined;
    this.handlers.terminals.disposeAll();
    if (client) {
      try {
        await client.stop(5000);
      } catch (err) {
        this.output.warn(`Stopping the server: ${String(err)}`);
      }
      await client.dispose().catch(() => undefined);
    }
  }

  dispose(): void {
    void this.stop();
  }

  private async doStart(): Promise<LanguageClient> {
    const read = settingReader();
    const { command, args } = serverCommand(read);
    const { options: initializationOptions, problems } = buildInitializationOptions(read);
    for (const p of problems) {
      this.output.warn(`Ignoring setting ${p.key}: ${p.message}`);
      void vscode.window.showWarningMessage(`agentls: ignoring ${p.key} (${p.message}); the server default applies.`);
    }
    const extraEnv = read('server.env');
    const env: NodeJS.ProcessEnv = { ...process.env };
    if (extraEnv && typeof extraEnv === 'object') {
      for (const [k, v] of Object.entries(extraEnv as Record<string, unknown>)) if (typeof v === 'string') env[k] = v;
    }
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const serverOptions: ServerOptions = { command, args, options: { cwd, env } };
    const clientOptions: LanguageClientOptions = {
      // Every file is synced, so the agent reads unsaved buffers.
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      initializationOptions,
      outputChannel: this.output,
      revealOutputChannelOn: 4 /* RevealOutputChannelOn.Never */,
      middleware: {
        workspace: {
          // VS Code applies the agent's edits to buffers; save them so commands the agent runs see them.
          handleApplyEdit: async (params, next) => {
            const result = await next(params, CancellationToken.None);
            if (result instanceof ResponseError || !result?.applied) return result;
            if (vscode.workspace.getConfiguration('agentls').get<boolean>('saveEdits', true)) await saveDocuments(editedUris(params.edit));
            return result;
          },
        },
      },
    };
    const client = new LanguageClient('agentls', 'agentls', serverOptions, clientOptions);
    client.registerFeature(this.feature);
    this.register(client);
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) this.handlers.onState('ready', undefined, initializationOptions.model);
      else if (e.newState === State.Stopped && this.client === client) this.handlers.onState('stopped');
      else if (e.newState === State.Starting) this.handlers.onState('starting');
    });
    this.handlers.onState('starting');
    this.output.info(`Starting ${[command, ...args].join(' ')} with ${JSON.stringify(initializationOptions)}`);
    try {
      await client.start();
    } catch (err) {
      const message = `Could not start "${[command, ...args].join(' ')}": ${err instanceof Error ? err.message : String(err)}. Set agentls.server.path to the agentls executable (for example .venv/bin/agentls).`;
      this.handlers.onState('error', message);
      await client.dispose().catch(() => undefined);
      void vscode.window.showErrorMessage(`agentls: ${message}`, 'Open Settings', 'Show Log').then((choice) => {
        if (choice === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'agentls.server');
        else if (choice === 'Show Log') this.output.show();
      });
      throw new Error(message);
    }
    this.client = client;
    this.handlers.onState('ready', undefined, initializationOptions.model);
    return client;
  }

  private register(client: LanguageClient): void {
    const h = this.handlers;
    client.onNotification(Methods.update, (params: AgentUpdateParams) => h.onUpdate(params));
    client.onRequest(Methods.requestPermission, (params: RequestPermissionParams, token: vscode.CancellationToken) =>
      h.requestPermission(params, token),
    );
    client.onRequest(Methods.diagnostics, (params: unknown) => h.diagnostics(params));
    const t = h.terminals;
    const wrap =
      <P, R>(fn: (p: P) => R | Promise<R>) =>
      async (params: P): Promise<R | ResponseError<void>> => {
        try {
          return await fn(params);
        } catch (err) {
          if (err instanceof TerminalError) return new ResponseError(err.code, err.message);
          throw err;
        }
      };
    client.onRequest(Methods.terminalCreate, wrap((p: Parameters<TerminalManager['create']>[0]) => t.create(p)));
    client.onRequest(Methods.terminalOutput, wrap((p: Parameters<TerminalManager['output']>[0]) => t.output(p)));
    client.onRequest(Methods.terminalWaitForExit, wrap((p: Parameters<TerminalManager['waitForExit']>[0]) => t.waitForExit(p)));
    client.onRequest(Methods.terminalKill, wrap((p: Parameters<TerminalManager['kill']>[0]) => t.kill(p)));
    client.onRequest(Methods.terminalRelease, wrap((p: Parameters<TerminalManager['release']>[0]) => t.release(p)));
  }
}
