/**
 * VS Code settings → `initializationOptions` (docs/protocol.md, Initialize) and the
 * client's `experimental.agent` capability. No `vscode` import.
 *
 * Only settings the user actually set are sent: init options take precedence
 * over the workspace `.agentls.toml`, so sending defaults would hide it.
 */

export interface InitializationOptions {
  model?: string;
  baseUrl?: string;
  provider?: 'openai' | 'anthropic';
  apiKeyEnv?: string;
  fallbackModels?: string[];
  maxIterations?: number;
  contextWindow?: number;
  compressionThreshold?: number;
  approval?: 'ask' | 'auto-edit' | 'yolo';
  /** MCP servers for every session (docs/mcp.md): `{name: {command, args, env} | {type, url, headers}}`. */
  mcpServers?: Record<string, Record<string, unknown>>;
}

/** Returns a setting's value when the user (any scope) set it, else undefined. */
export type SettingReader = (key: string) => unknown;

/**
 * Settings an untrusted workspace may not set: they choose what runs, with
 * which environment, how freely, and where the code is sent. Mirrored in
 * package.json `capabilities.untrustedWorkspaces.restrictedConfigurations`.
 */
export const UNTRUSTED_RESTRICTED = ['server.path', 'server.args', 'server.env', 'approval', 'baseUrl', 'mcpServers'];

/** `agentls.mcpServers`: an object of server entries (each an object with a `command` or a `url`). */
export function mcpServers(v: unknown): Record<string, Record<string, unknown>> | undefined {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const out: Record<string, Record<string, unknown>> = {};
  for (const [name, entry] of Object.entries(v as Record<string, unknown>)) {
    if (!name.trim() || !entry || typeof entry !== 'object' || Array.isArray(entry)) return undefined;
    const e = entry as Record<string, unknown>;
    if (typeof e.command !== 'string' && typeof e.url !== 'string') return undefined;
    out[name] = e;
  }
  return out;
}

/**
 * The value the user set for `key` (folder > workspace > user), from
 * `WorkspaceConfiguration.inspect`. In an untrusted workspace the restricted
 * keys come from user settings only (inspect() still reports workspace values).
 */
export function effectiveSetting(
  i: { globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown } | undefined,
  key: string,
  trusted: boolean,
): unknown {
  if (!trusted && UNTRUSTED_RESTRICTED.includes(key)) return i?.globalValue;
  return i?.workspaceFolderValue ?? i?.workspaceValue ?? i?.globalValue;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
const num = (v: unknown, min: number, max: number): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max ? v : undefined;

export interface SettingsProblem {
  key: string;
  message: string;
}

/**
 * Build the init options. Invalid values are dropped and reported (the server
 * then uses its own default), never sent.
 */
export function buildInitializationOptions(read: SettingReader): {
  options: InitializationOptions;
  problems: SettingsProblem[];
} {
  const options: InitializationOptions = {};
  const problems: SettingsProblem[] = [];
  const take = <T>(key: string, value: unknown, parsed: T | undefined, expect: string): T | undefined => {
    if (value === undefined || value === null || value === '') return undefined;
    if (parsed === undefined) problems.push({ key: `agentls.${key}`, message: `expected ${expect}, got ${JSON.stringify(value)}` });
    return parsed;
  };

  const model = take('model', read('model'), str(read('model')), 'a model name');
  if (model) options.model = model;
  const baseUrl = take('baseUrl', read('baseUrl'), str(read('baseUrl')), 'a URL');
  if (baseUrl) options.baseUrl = baseUrl;
  const providerRaw = read('provider');
  const provider = take(
    'provider',
    providerRaw,
    providerRaw === 'openai' || providerRaw === 'anthropic' ? providerRaw : undefined,
    '"openai" or "anthropic"',
  );
  if (provider) options.provider = provider;
  const apiKeyEnvRaw = read('apiKeyEnv');
  const apiKeyEnv = take(
    'apiKeyEnv',
    apiKeyEnvRaw,
    typeof apiKeyEnvRaw === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(apiKeyEnvRaw) ? apiKeyEnvRaw : undefined,
    'the name of an environment variable',
  );
  if (apiKeyEnv) options.apiKeyEnv = apiKeyEnv;
  const fallbackRaw = read('fallbackModels');
  if (Array.isArray(fallbackRaw)) {
    const list = fallbackRaw.map(str).filter((s): s is string => !!s);
    if (list.length) options.fallbackModels = list;
  } else {
    take('fallbackModels', fallbackRaw, undefined, 'a list of model names');
  }
  const maxIterations = take('maxIterations', read('maxIterations'), num(read('maxIterations'), 1, 10_000), 'a number from 1 to 10000');
  if (maxIterations !== undefined) options.maxIterations = Math.floor(maxIterations);
  const contextWindow = take('contextWindow', read('contextWindow'), num(read('contextWindow'), 1024, 100_000_000), 'a token count ≥ 1024');
  if (contextWindow !== undefined) options.contextWindow = Math.floor(contextWindow);
  const compressionThreshold = take(
    'compressionThreshold',
    read('compressionThreshold'),
    num(read('compressionThreshold'), 0.05, 1),
    'a fraction between 0.05 and 1',
  );
  if (compressionThreshold !== undefined) options.compressionThreshold = compressionThreshold;
  const approvalRaw = read('approval');
  const approval = take(
    'approval',
    approvalRaw,
    approvalRaw === 'ask' || approvalRaw === 'auto-edit' || approvalRaw === 'yolo' ? approvalRaw : undefined,
    '"ask", "auto-edit" or "yolo"',
  );
  if (approval) options.approval = approval;
  const mcpRaw = read('mcpServers');
  const servers = take('mcpServers', mcpRaw, mcpServers(mcpRaw), 'an object of MCP servers, each with a "command" or a "url"');
  if (servers && Object.keys(servers).length) options.mcpServers = servers;
  return { options, problems };
}

/** The keys whose change needs a server restart. */
export const RESTART_KEYS = [
  'server.path',
  'server.args',
  'server.env',
  'model',
  'baseUrl',
  'provider',
  'apiKeyEnv',
  'fallbackModels',
  'maxIterations',
  'contextWindow',
  'compressionThreshold',
  'approval',
  'mcpServers',
];

/** `capabilities.experimental.agent` as docs/protocol.md defines it. */
export function agentClientCapability(): { terminal: boolean; permissions: boolean; updates: boolean; diagnostics: boolean } {
  return { terminal: true, permissions: true, updates: true, diagnostics: true };
}

/** Merge the agent capability into client capabilities without clobbering other experimental keys. */
export function fillAgentCapabilities(capabilities: { experimental?: unknown }): void {
  const experimental =
    capabilities.experimental && typeof capabilities.experimental === 'object'
      ? (capabilities.experimental as Record<string, unknown>)
      : {};
  capabilities.experimental = { ...experimental, agent: agentClientCapability() };
}

/** Server command line: `<path> <args…>`; a path like "agentls" is looked up on PATH. */
export function serverCommand(read: SettingReader): { command: string; args: string[] } {
  const command = str(read('server.path')) ?? 'agentls';
  const argsRaw = read('server.args');
  const args = Array.isArray(argsRaw) && argsRaw.every((a) => typeof a === 'string') ? (argsRaw as string[]) : ['lsp'];
  return { command, args };
}
