/**
 * Shows agent terminals as real VS Code terminals: a Pseudoterminal mirrors the
 * output of the process the TerminalManager spawned, and forwards typing and
 * Ctrl+C back to it.
 */

import * as vscode from 'vscode';
import type { ExitStatus, TerminalControls, TerminalInfo, TerminalSink } from './core/terminals';

const DIM = '\x1b[2m';
const RESET = '\x1b[0m';
const crlf = (s: string): string => s.replace(/\r?\n/g, '\r\n');

/** Released terminals stay visible for reading; only the most recent few are kept. */
const KEEP_RELEASED = 5;

export class TerminalHost implements vscode.Disposable {
  private readonly terminals = new Map<string, vscode.Terminal>();
  private readonly released: string[] = [];

  /** A `SinkFactory` for the TerminalManager. */
  readonly sinkFactory = (info: TerminalInfo, controls: TerminalControls): TerminalSink => {
    const write = new vscode.EventEmitter<string>();
    const close = new vscode.EventEmitter<number | void>();
    let opened = false;
    let exited = false;
    const pending: string[] = [];
    const emit = (s: string): void => {
      if (opened) write.fire(s);
      else pending.push(s);
    };
    emit(`${DIM}$ ${info.label}${info.cwd ? `   (in ${info.cwd})` : ''}${RESET}\r\n`);
    const pty: vscode.Pseudoterminal = {
      onDidWrite: write.event,
      onDidClose: close.event,
      open: () => {
        opened = true;
        for (const s of pending.splice(0)) write.fire(s);
      },
      close: () => {
        if (!exited) controls.kill();
      },
      handleInput: (data) => {
        if (!exited) controls.input(data);
      },
    };
    const short = info.label.length > 40 ? `${info.label.slice(0, 39)}…` : info.label;
    const terminal = vscode.window.createTerminal({
      name: `agentls: ${short}`,
      pty,
      iconPath: new vscode.ThemeIcon('hubot'),
      isTransient: true,
    });
    this.terminals.set(info.terminalId, terminal);
    if (vscode.workspace.getConfiguration('agentls').get<boolean>('terminal.reveal', false)) terminal.show(true);
    return {
      write: (data) => emit(crlf(data)),
      exited: (status: ExitStatus) => {
        exited = true;
        const how = status.signal ? `killed by ${status.signal}` : `exit code ${status.exitCode}`;
        emit(`\r\n${DIM}[process ended: ${how}]${RESET}\r\n`);
      },
      dispose: () => {
        this.released.push(info.terminalId);
        while (this.released.length > KEEP_RELEASED) {
          const old = this.released.shift()!;
          this.terminals.get(old)?.dispose();
          this.terminals.delete(old);
        }
      },
    };
  };

  /** Reveal the VS Code terminal of an agent terminal id. */
  show(terminalId: string): boolean {
    const t = this.terminals.get(terminalId);
    if (!t || t.exitStatus !== undefined) return false;
    t.show(false);
    return true;
  }

  dispose(): void {
    for (const t of this.terminals.values()) t.dispose();
    this.terminals.clear();
  }
}
