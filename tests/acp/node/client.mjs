// Drives an ACP agent with the official npm SDK through one prompt with a tool call.
//   node client.mjs <workspace> <agent command...>
// Prints one JSON summary line on stdout; exits non-zero on failure.
import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const [workspace, command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"], env: process.env });
const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const updates = [];
const calls = [];
const app = client({ name: "agentls-npm-test" })
  .onNotification(methods.client.session.update, async ({ params }) => {
    updates.push(params.update);
  })
  .onRequest(methods.client.fs.readTextFile, async ({ params }) => {
    calls.push(["fs/read_text_file", params.path]);
    return { content: await readFile(params.path, "utf8") };
  })
  .onRequest(methods.client.fs.writeTextFile, async ({ params }) => {
    calls.push(["fs/write_text_file", params.path]);
    await writeFile(params.path, params.content, "utf8");
    return {};
  })
  .onRequest(methods.client.session.requestPermission, async ({ params }) => {
    calls.push(["session/request_permission", params.toolCall.toolCallId]);
    return { outcome: { outcome: "selected", optionId: "allow_once" } };
  });

try {
  const summary = await app.connectWith(stream, async (ctx) => {
    const init = await ctx.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
      clientInfo: { name: "agentls-npm-test", version: "1.0.0" },
    });
    const session = await ctx.request(methods.agent.session.new, { cwd: workspace, mcpServers: [] });
    const result = await ctx.request(methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "Create hello.txt saying hello" }],
    });
    return {
      agent: init.agentInfo?.name,
      steering: init._meta?.steering?.supported ?? false,
      sessionId: session.sessionId,
      modes: session.modes?.availableModes?.map((m) => m.id) ?? [],
      stopReason: result.stopReason,
      kinds: updates.map((u) => u.sessionUpdate),
      diffs: updates.flatMap((u) => (u.content && Array.isArray(u.content) ? u.content : []))
        .filter((c) => c.type === "diff"),
      calls,
    };
  });
  process.stdout.write(JSON.stringify(summary) + "\n");
  child.stdin.end();
  process.exitCode = 0;
} catch (err) {
  process.stderr.write(`npm client failed: ${err?.stack ?? err}\n`);
  child.kill();
  process.exitCode = 1;
}
