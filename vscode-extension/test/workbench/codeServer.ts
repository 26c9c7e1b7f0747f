/**
 * Real VS Code for the workbench suite: code-server (VS Code's own workbench, served to a browser)
 * from the cache that scripts/editors/install-code-server fills, with the packaged .vsix installed
 * into a throwaway user-data and extensions directory, started on 127.0.0.1 with auth none and a
 * workspace folder. Nothing here touches the user's VS Code, code-server or agentls configuration.
 */

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { REPO, within } from '../wire/agentls';

export const INSTALLER = path.join(REPO, 'scripts', 'editors', 'install-code-server');
export const ARTIFACTS = path.join(REPO, 'test-artifacts', 'vscode-workbench');

/**
 * AGENTLS_REAL_EDITORS: `skip` skips the real-editor suites, `require` makes a missing editor a
 * failure (CI), anything else (`auto`, unset) installs what it can and skips with a message otherwise.
 */
export function realEditorsMode(): 'skip' | 'require' | 'auto' {
  const v = (process.env.AGENTLS_REAL_EDITORS ?? 'auto').toLowerCase();
  return v === 'skip' || v === '0' || v === 'no' ? 'skip' : v === 'require' ? 'require' : 'auto';
}

/** The code-server launcher: $AGENTLS_CODE_SERVER, else the installer's (cached) one. */
export function findCodeServer(): { path?: string; why?: string } {
  const given = process.env.AGENTLS_CODE_SERVER;
  if (given) return fs.existsSync(given) ? { path: given } : { why: `AGENTLS_CODE_SERVER=${given} does not exist` };
  // Cached: prints the path at once. Missing: builds (minutes), its progress on our stderr.
  const r = spawnSync(INSTALLER, [], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 30 * 60_000 });
  const out = (r.stdout ?? '').trim().split('\n').pop() ?? '';
  if (r.status === 0 && out && fs.existsSync(out)) return { path: out };
  return { why: `${INSTALLER} failed (exit ${r.status ?? r.error?.message})` };
}

/** $AGENTLS_VSIX, else a fresh package: `npm run package` here (esbuild, then vsce; a few seconds). */
export function packageVsix(extRoot: string): { path?: string; why?: string } {
  if (process.env.AGENTLS_VSIX) {
    const given = process.env.AGENTLS_VSIX;
    return fs.existsSync(given) ? { path: given } : { why: `AGENTLS_VSIX=${given} does not exist` };
  }
  for (const f of fs.readdirSync(extRoot)) if (/^agentls-.*\.vsix$/.test(f)) fs.rmSync(path.join(extRoot, f));
  const r = spawnSync('npm', ['run', '--silent', 'package'], { cwd: extRoot, encoding: 'utf8', timeout: 300_000 });
  const built = fs.readdirSync(extRoot).find((f) => /^agentls-.*\.vsix$/.test(f));
  if (r.status === 0 && built) return { path: path.join(extRoot, built) };
  return { why: `npm run package failed (exit ${r.status ?? r.error?.message}):\n${r.stdout}\n${r.stderr}` };
}

export interface CodeServer {
  url: string;
  workspace: string;
  home: string;
  log(): string;
  stop(): Promise<void>;
}

export interface CodeServerOptions {
  codeServer: string;
  vsix: string;
  /** Written to both User and Machine settings: in code-server the extension host runs on the
   * "remote" side, where machine-scoped settings such as agentls.server.path come from Machine. */
  settings: Record<string, unknown>;
  files: Record<string, string>;
  env: NodeJS.ProcessEnv;
}

export async function startCodeServer(opts: CodeServerOptions): Promise<CodeServer> {
  const home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-workbench-')));
  const workspace = path.join(home, 'ws');
  const userData = path.join(home, 'user-data');
  const extensions = path.join(home, 'extensions');
  for (const [name, text] of Object.entries(opts.files)) {
    fs.mkdirSync(path.dirname(path.join(workspace, name)), { recursive: true });
    fs.writeFileSync(path.join(workspace, name), text);
  }
  for (const scope of ['User', 'Machine']) {
    fs.mkdirSync(path.join(userData, scope), { recursive: true });
    fs.writeFileSync(path.join(userData, scope, 'settings.json'), JSON.stringify(opts.settings, null, 2));
  }
  const config = path.join(home, 'config.yaml');
  fs.writeFileSync(config, 'bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...opts.env,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, 'config'),
    XDG_DATA_HOME: path.join(home, 'data'),
    XDG_CACHE_HOME: path.join(home, 'cache'),
    // The agentls server the extension starts keeps its sessions here, not in the user's data.
    AGENTLS_DATA_DIR: path.join(home, 'agentls-data'),
  };
  const common = ['--config', config, '--user-data-dir', userData, '--extensions-dir', extensions];

  const install = spawnSync(opts.codeServer, [...common, '--install-extension', opts.vsix, '--force'], {
    env,
    encoding: 'utf8',
    timeout: 180_000,
  });
  if (install.status !== 0 || !/successfully installed/.test(install.stdout + install.stderr)) {
    throw new Error(`code-server --install-extension ${opts.vsix} failed:\n${install.stdout}\n${install.stderr}`);
  }

  let log = '';
  const child: ChildProcess = spawn(
    opts.codeServer,
    [...common, '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust',
      '--disable-getting-started-override', '--ignore-last-opened', workspace],
    { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<never>((_r, reject) =>
    child.once('exit', (code, signal) => reject(new Error(`code-server exited (${code ?? signal}):\n${log.slice(-4000)}`))),
  );
  exited.catch(() => undefined);
  const url = await within(
    'code-server to listen',
    120_000,
    Promise.race([
      exited,
      new Promise<string>((resolve) => {
        createInterface({ input: child.stdout! }).on('line', (line) => {
          log += line + '\n';
          const m = /HTTP server listening on (http:\/\/127\.0\.0\.1:\d+)\//.exec(line);
          if (m) resolve(m[1]!);
        });
      }),
    ]),
  );

  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      // Its own process group: the extension host and the agentls server it started go with it.
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        /* gone */
      }
      const gone = await Promise.race([new Promise((r) => child.once('exit', () => r(true))), new Promise((r) => setTimeout(() => r(false), 10_000))]);
      if (!gone) {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    }
    fs.rmSync(home, { recursive: true, force: true });
  };
  return { url, workspace, home, log: () => log, stop };
}
