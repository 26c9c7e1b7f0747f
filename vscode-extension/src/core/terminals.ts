/**
 * Process and terminal bookkeeping for `agent/terminal/*` (the shapes of ACP
 * `terminal/*`). No `vscode` import: the extension plugs a VS Code
 * Pseudoterminal in through `SinkFactory`, the tests plug in nothing.
 *
 *  create      → spawn the process now, return {terminalId}
 *  output      → {output, truncated, exitStatus?}   (output kept within outputByteLimit)
 *  waitForExit → {exitCode, signal}                  (resolves when the process is gone)
 *  kill        → stop the process, keep its output
 *  release     → stop the process and forget the terminal
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';

export interface EnvVariable {
  name: string;
  value: string;
}

export interface CreateTerminalParams {
  sessionId: string;
  command: string;
  args?: string[] | null;
  cwd?: string | null;
  env?: EnvVariable[] | null;
  outputByteLimit?: number | null;
}

export interface TerminalIdParams {
  sessionId?: string;
  terminalId: string;
}

export interface ExitStatus {
  exitCode: number | null;
  signal: string | null;
}

export interface TerminalOutputResult {
  output: string;
  truncated: boolean;
  exitStatus?: ExitStatus | null;
}

/** Where a terminal's live output is shown (a VS Code Pseudoterminal in the extension). */
export interface TerminalSink {
  /** Raw process output as it arrives (UTF-8 text). */
  write(data: string): void;
  /** The process ended. */
  exited(status: ExitStatus): void;
  /** The terminal was released; close the view. */
  dispose(): void;
}

export interface TerminalInfo {
  terminalId: string;
  sessionId: string;
  command: string;
  args: string[];
  cwd: string | undefined;
  /** The command line as a user would type it. */
  label: string;
}

export type SinkFactory = (info: TerminalInfo, controls: TerminalControls) => TerminalSink | undefined;

/** What a sink may do back to its process (typing into it, Ctrl+C, closing the view). */
export interface TerminalControls {
  input(data: string): void;
  kill(): void;
}

export interface TerminalManagerOptions {
  sinkFactory?: SinkFactory;
  /** cwd when the request has none (the workspace folder). */
  defaultCwd?: () => string | undefined;
  /** Called (not more than once per `outputThrottleMs`) with the retained output. */
  onOutput?: (terminalId: string, output: string, exit: ExitStatus | null) => void;
  outputThrottleMs?: number;
  /** Retention cap when the request sets no outputByteLimit. */
  defaultByteLimit?: number;
  /** Grace period between SIGTERM and SIGKILL. */
  killGraceMs?: number;
}

export class TerminalError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'TerminalError';
  }
}

/** Invalid params (JSON-RPC -32602). */
export const INVALID_PARAMS = -32602;

const DEFAULT_BYTE_LIMIT = 4 * 1024 * 1024;

/**
 * Keep the last `limit` bytes of `buf`, cut at a UTF-8 character boundary
 * (never in the middle of a multi-byte sequence). Returns the kept bytes.
 */
export function truncateStartUtf8(buf: Buffer, limit: number): Buffer {
  if (buf.length <= limit) return buf;
  if (limit <= 0) return Buffer.alloc(0);
  let start = buf.length - limit;
  // Skip continuation bytes (10xxxxxx) so the kept text starts on a character.
  while (start < buf.length && (buf[start]! & 0xc0) === 0x80) start++;
  return buf.subarray(start);
}

class OutputBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  truncated = false;

  constructor(private readonly limit: number) {}

  push(data: Buffer): void {
    this.chunks.push(data);
    this.size += data.length;
    if (this.size > this.limit) {
      const kept = truncateStartUtf8(Buffer.concat(this.chunks), this.limit);
      this.chunks = [kept];
      this.size = kept.length;
      this.truncated = true;
    }
  }

  text(): string {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks)];
    const buf = this.chunks[0] ?? Buffer.alloc(0);
    // A process may stop mid-character; decode what is complete.
    return new StringDecoder('utf8').write(buf);
  }
}

interface Entry {
  info: TerminalInfo;
  proc: ChildProcess | null;
  out: OutputBuffer;
  exit: ExitStatus | null;
  exited: Promise<ExitStatus>;
  sink: TerminalSink | undefined;
  killTimer: NodeJS.Timeout | undefined;
  notifyTimer: NodeJS.Timeout | undefined;
  released: boolean;
}

/** Quote one argument for display (not for execution). */
function displayArg(a: string): string {
  return /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}

export class TerminalManager {
  private readonly terminals = new Map<string, Entry>();
  private nextId = 1;

  constructor(private readonly options: TerminalManagerOptions = {}) {}

  get size(): number {
    return this.terminals.size;
  }

  /** Terminal ids, oldest first. */
  ids(): string[] {
    return [...this.terminals.keys()];
  }

  info(terminalId: string): TerminalInfo | undefined {
    return this.terminals.get(terminalId)?.info;
  }

  create(params: CreateTerminalParams): { terminalId: string } {
    if (!params || typeof params.command !== 'string' || params.command.trim() === '') {
      throw new TerminalError(INVALID_PARAMS, 'agent/terminal/create needs a non-empty "command" string.');
    }
    const args = Array.isArray(params.args) ? params.args.map(String) : [];
    const cwd = params.cwd ?? this.options.defaultCwd?.() ?? undefined;
    const terminalId = `term-${this.nextId++}`;
    // `sh -c <line>` (how agentls sends shell lines) is labelled with the line itself.
    const shellLine = /^(\/bin\/)?(ba)?sh$/.test(params.command) && args.length === 2 && args[0] === '-c';
    const label = shellLine ? args[1] : [params.command, ...args.map(displayArg)].join(' ');
    const info: TerminalInfo = { terminalId, sessionId: params.sessionId, command: params.command, args, cwd, label };
    const limit =
      typeof params.outputByteLimit === 'number' && params.outputByteLimit >= 0
        ? params.outputByteLimit
        : (this.options.defaultByteLimit ?? DEFAULT_BYTE_LIMIT);

    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const v of params.env ?? []) {
      if (v && typeof v.name === 'string') env[v.name] = String(v.value ?? '');
    }

    let resolveExit!: (s: ExitStatus) => void;
    const entry: Entry = {
      info,
      proc: null,
      out: new OutputBuffer(limit),
      exit: null,
      exited: new Promise<ExitStatus>((r) => (resolveExit = r)),
      sink: undefined,
      killTimer: undefined,
      notifyTimer: undefined,
      released: false,
    };
    this.terminals.set(terminalId, entry);

    const finish = (status: ExitStatus): void => {
      if (entry.exit) return;
      entry.exit = status;
      if (entry.killTimer) clearTimeout(entry.killTimer);
      entry.sink?.exited(status);
      this.notify(entry, true);
      resolveExit(status);
    };

    entry.sink = this.options.sinkFactory?.(info, {
      input: (data) => this.input(terminalId, data),
      kill: () => this.killEntry(entry),
    });

    let proc: ChildProcess;
    try {
      // Without args the command is a shell command line ("pytest -q | tail");
      // with args it is an executable and its argv.
      proc = spawn(params.command, args, {
        cwd,
        env,
        shell: args.length === 0,
        detached: process.platform !== 'win32',
        stdio: ['pipe', 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (err) {
      const msg = `Could not start "${label}": ${(err as Error).message}\n`;
      entry.out.push(Buffer.from(msg));
      entry.sink?.write(msg);
      finish({ exitCode: 127, signal: null });
      return { terminalId };
    }
    entry.proc = proc;

    // One decoder per stream so a character split across reads shows intact.
    const onData = (decoder: StringDecoder) => (data: Buffer): void => {
      entry.out.push(data);
      const text = decoder.write(data);
      if (text) entry.sink?.write(text);
      this.notify(entry, false);
    };
    proc.stdout?.on('data', onData(new StringDecoder('utf8')));
    proc.stderr?.on('data', onData(new StringDecoder('utf8')));
    proc.stdin?.on('error', () => undefined);
    proc.on('error', (err) => {
      const msg = `Could not start "${label}": ${err.message}\n`;
      entry.out.push(Buffer.from(msg));
      entry.sink?.write(msg);
      finish({ exitCode: 127, signal: null });
    });
    // 'close' waits for stdio to drain, so output() after waitForExit() is complete.
    proc.on('close', (code, signal) => finish({ exitCode: code, signal: signal ?? null }));
    return { terminalId };
  }

  output(params: TerminalIdParams): TerminalOutputResult {
    const e = this.get(params);
    const result: TerminalOutputResult = { output: e.out.text(), truncated: e.out.truncated };
    if (e.exit) result.exitStatus = { ...e.exit };
    return result;
  }

  async waitForExit(params: TerminalIdParams): Promise<ExitStatus> {
    const e = this.get(params);
    const s = await e.exited;
    return { exitCode: s.exitCode, signal: s.signal };
  }

  kill(params: TerminalIdParams): Record<string, never> {
    this.killEntry(this.get(params));
    return {};
  }

  release(params: TerminalIdParams): Record<string, never> {
    const e = this.get(params);
    this.killEntry(e);
    e.released = true;
    if (e.notifyTimer) clearTimeout(e.notifyTimer);
    this.terminals.delete(e.info.terminalId);
    e.sink?.dispose();
    return {};
  }

  /** Type into a running process (from the terminal view). */
  input(terminalId: string, data: string): void {
    const e = this.terminals.get(terminalId);
    if (!e?.proc || e.exit) return;
    if (data === '\x03') {
      this.killEntry(e);
      return;
    }
    e.proc.stdin?.write(data.replace(/\r/g, '\n'));
  }

  /** Release every terminal (extension deactivation, server restart). */
  disposeAll(): void {
    for (const id of [...this.terminals.keys()]) this.release({ terminalId: id });
  }

  private get(params: TerminalIdParams): Entry {
    const id = params?.terminalId;
    const e = typeof id === 'string' ? this.terminals.get(id) : undefined;
    if (!e) {
      throw new TerminalError(
        INVALID_PARAMS,
        `Unknown terminal id ${JSON.stringify(id)}: it was never created or has been released.`,
      );
    }
    return e;
  }

  private killEntry(e: Entry): void {
    const proc = e.proc;
    if (!proc || e.exit || proc.pid === undefined) return;
    const signal = (sig: NodeJS.Signals): void => {
      try {
        // The process leads its own group (detached), so its children stop too.
        if (process.platform !== 'win32') process.kill(-proc.pid!, sig);
        else proc.kill(sig);
      } catch {
        try {
          proc.kill(sig);
        } catch {
          /* already gone */
        }
      }
    };
    signal('SIGTERM');
    if (!e.killTimer) {
      e.killTimer = setTimeout(() => {
        if (!e.exit) signal('SIGKILL');
      }, this.options.killGraceMs ?? 2000);
      e.killTimer.unref?.();
    }
  }

  private notify(e: Entry, now: boolean): void {
    const cb = this.options.onOutput;
    if (!cb || e.released) return;
    const fire = (): void => {
      e.notifyTimer = undefined;
      cb(e.info.terminalId, e.out.text(), e.exit);
    };
    if (now) {
      if (e.notifyTimer) clearTimeout(e.notifyTimer);
      fire();
    } else if (!e.notifyTimer) {
      e.notifyTimer = setTimeout(fire, this.options.outputThrottleMs ?? 100);
    }
  }
}
