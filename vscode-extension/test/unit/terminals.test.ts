import assert from 'node:assert/strict';
import * as os from 'node:os';
import { TerminalError, TerminalManager, truncateStartUtf8, type ExitStatus, type TerminalSink } from '../../src/core/terminals';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('terminal bookkeeping', () => {
  let mgr: TerminalManager;
  afterEach(() => mgr?.disposeAll());

  it('runs a shell command line and captures output and exit status', async () => {
    mgr = new TerminalManager();
    const { terminalId } = mgr.create({ sessionId: 's', command: 'echo hello; echo oops >&2; exit 3' });
    const exit = await mgr.waitForExit({ sessionId: 's', terminalId });
    assert.deepEqual(exit, { exitCode: 3, signal: null });
    const out = mgr.output({ sessionId: 's', terminalId });
    assert.match(out.output, /hello\n/);
    assert.match(out.output, /oops\n/);
    assert.equal(out.truncated, false);
    assert.deepEqual(out.exitStatus, { exitCode: 3, signal: null });
  });

  it('runs an executable with args, cwd and env', async () => {
    mgr = new TerminalManager();
    const { terminalId } = mgr.create({
      sessionId: 's',
      command: process.execPath,
      args: ['-e', 'console.log(process.cwd() + "|" + process.env.AGENTLS_T)'],
      cwd: os.tmpdir(),
      env: [{ name: 'AGENTLS_T', value: 'v1' }],
    });
    await mgr.waitForExit({ terminalId });
    const { output } = mgr.output({ terminalId });
    const [cwd, env] = output.trim().split('|');
    assert.equal(env, 'v1');
    assert.equal(require('node:fs').realpathSync(cwd!), require('node:fs').realpathSync(os.tmpdir()));
  });

  it('reports no exitStatus while running, and kill stops the process group', async () => {
    mgr = new TerminalManager({ killGraceMs: 500 });
    const { terminalId } = mgr.create({ sessionId: 's', command: 'sleep 30 & sleep 30; echo never' });
    await sleep(100);
    assert.equal(mgr.output({ terminalId }).exitStatus, undefined);
    mgr.kill({ terminalId });
    const exit = await mgr.waitForExit({ terminalId });
    assert.equal(exit.exitCode, null);
    assert.equal(exit.signal, 'SIGTERM');
    // Output stays readable after kill until release.
    assert.equal(typeof mgr.output({ terminalId }).output, 'string');
  });

  it('truncates from the beginning at a character boundary', async () => {
    mgr = new TerminalManager();
    const { terminalId } = mgr.create({
      sessionId: 's',
      command: process.execPath,
      args: ['-e', 'process.stdout.write("é".repeat(1000) + "END")'],
      outputByteLimit: 101,
    });
    await mgr.waitForExit({ terminalId });
    const out = mgr.output({ terminalId });
    assert.equal(out.truncated, true);
    assert.ok(out.output.endsWith('END'));
    assert.ok(Buffer.byteLength(out.output) <= 101);
    assert.ok(!out.output.includes('\ufffd'), 'no broken characters');
  });

  it('truncateStartUtf8 never starts on a continuation byte', () => {
    const buf = Buffer.from('aé€😀b');
    for (let limit = 0; limit <= buf.length; limit++) {
      const kept = truncateStartUtf8(buf, limit);
      assert.ok(kept.length <= limit);
      assert.ok(!kept.toString('utf8').includes('\ufffd'), `limit ${limit}`);
    }
  });

  it('release forgets the terminal and unknown ids are invalid params', async () => {
    mgr = new TerminalManager();
    const { terminalId } = mgr.create({ sessionId: 's', command: 'sleep 10' });
    mgr.release({ terminalId });
    assert.equal(mgr.size, 0);
    assert.throws(
      () => mgr.output({ terminalId }),
      (e: unknown) => e instanceof TerminalError && e.code === -32602 && /Unknown terminal id/.test(e.message),
    );
    assert.throws(() => mgr.create({ sessionId: 's', command: '' }), TerminalError);
  });

  it('reports a command that cannot start as exit 127 with a message', async () => {
    mgr = new TerminalManager();
    const { terminalId } = mgr.create({ sessionId: 's', command: '/nonexistent/agentls-nope', args: ['x'] });
    const exit = await mgr.waitForExit({ terminalId });
    assert.equal(exit.exitCode, 127);
    assert.match(mgr.output({ terminalId }).output, /Could not start/);
  });

  it('mirrors output to the sink, forwards input, and notifies (throttled)', async () => {
    const writes: string[] = [];
    let exited: ExitStatus | undefined;
    let disposed = false;
    const notes: [string, ExitStatus | null][] = [];
    let controls: { input(d: string): void } | undefined;
    mgr = new TerminalManager({
      outputThrottleMs: 10,
      sinkFactory: (info, c): TerminalSink => {
        assert.equal(info.label, 'cat');
        controls = c;
        return { write: (d) => writes.push(d), exited: (s) => (exited = s), dispose: () => (disposed = true) };
      },
      onOutput: (_id, out, exit) => notes.push([out, exit]),
    });
    const { terminalId } = mgr.create({ sessionId: 's', command: 'cat', args: [] });
    controls!.input('typed\r');
    await sleep(150);
    controls!.input('\x03'); // Ctrl+C kills
    await mgr.waitForExit({ terminalId });
    assert.match(writes.join(''), /typed\n/);
    assert.ok(exited);
    assert.ok(notes.length >= 2);
    assert.ok(notes[notes.length - 1]![1], 'last notification carries the exit');
    mgr.release({ terminalId });
    assert.ok(disposed);
  });
});
