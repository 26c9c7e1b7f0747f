// Records test/fixtures/recorded-turn.json: the agent/update stream of one real
// turn of `agentls lsp` (scripted provider replies: plan, read, edit, command,
// final answer), then a manual compaction. Paths are rewritten to /work/demo.
// Run: npx tsx scripts/record-fixture.ts   (needs the Python side: ../.venv)
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Methods, type TurnResult } from '../src/acp';
import { agentlsUnavailable, startAgentls } from '../test/wire/agentls';

const CONFIG = 'def parse_port(value):\n    return int(value)\n\n\ndef parse_host(value):\n    return value.strip()\n';
const NEW_BODY =
  '    try:\n        port = int(value)\n    except (TypeError, ValueError):\n        raise ValueError(f"port must be a number, got {value!r}")\n' +
  '    if not 1 <= port <= 65535:\n        raise ValueError(f"port out of range: {port}")\n    return port\n';
const plan = (a: string, b: string, c: string) => ({
  items: [
    { content: 'Read src/config.py', status: a, priority: 'high' },
    { content: 'Validate the port range in parse_port', status: b, priority: 'high' },
    { content: 'Check it from the command line', status: c, priority: 'medium' },
  ],
});

async function main(): Promise<void> {
  const why = agentlsUnavailable();
  if (why) throw new Error(why);
  const rig = await startAgentls({ 'src/config.py': CONFIG, 'README.md': '# demo\n' });
  try {
    const sessionId = await rig.newSession();
    const prompt = 'Add input validation to parse_port and check it works';
    await rig.push([
      { reasoning: 'Small task: read the parser, add validation, then try it.', tool_calls: [{ name: 'todo', arguments: plan('in_progress', 'pending', 'pending') }] },
      { content: "I'll start by reading `src/config.py` to see how ports are parsed.", tool_calls: [{ name: 'read_file', arguments: { path: 'src/config.py' } }] },
      { tool_calls: [{ name: 'todo', arguments: plan('completed', 'in_progress', 'pending') }] },
      { tool_calls: [{ name: 'edit_file', arguments: { path: 'src/config.py', old_string: '    return int(value)\n', new_string: NEW_BODY } }] },
      { tool_calls: [{ name: 'todo', arguments: plan('completed', 'completed', 'in_progress') }] },
      { tool_calls: [{ name: 'terminal', arguments: { command: `python3 -c "import sys; sys.path.insert(0, 'src'); import config; print(config.parse_port('8080'))"` } }] },
      { tool_calls: [{ name: 'todo', arguments: plan('completed', 'completed', 'completed') }] },
      {
        content:
          'Done. `parse_port` now:\n\n- rejects values that are not numbers\n- checks the **1–65535** range\n\n```python\nparse_port("8080")  # 8080\nparse_port("http")  # ValueError\n```\n',
      },
    ]);
    const result = await rig.conn.sendRequest<TurnResult>(Methods.turn, { sessionId, prompt });
    await rig.push([{ content: '**Goal:** validate ports in `parse_port`.\n**Done:** edited src/config.py; checked 8080 parses.' }], 'purpose:summary');
    const compress = await rig.conn.sendRequest(Methods.compress, { sessionId, focus: 'the port validation' }).catch((e: Error) => ({ error: e.message }));
    await new Promise((r) => setTimeout(r, 300));
    const scrub = (v: unknown): unknown => JSON.parse(JSON.stringify(v).split(rig.workspace).join('/work/demo'));
    const fixture = {
      description:
        'Recorded from the real `agentls lsp` with the scripted provider by scripts/record-fixture.ts: agent/update params of one turn, then agent/compress.',
      prompt,
      sessionId,
      events: scrub(rig.updates.filter((u) => u.sessionId === sessionId)) as unknown[],
      permissions: scrub(rig.permissions),
      result: scrub(result),
      compress: scrub(compress),
    };
    const out = path.join(__dirname, '..', 'test', 'fixtures', 'recorded-turn.json');
    fs.writeFileSync(out, JSON.stringify(fixture, null, 1) + '\n');
    console.log(`wrote ${out}: ${fixture.events.length} updates`);
  } finally {
    await rig.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
