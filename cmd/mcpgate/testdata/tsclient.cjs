// A client written on the official TypeScript SDK, for the Go tests: it
// connects to `mcpgate fixture` over the transport named in argv[2] and
// prints, as JSON, what each exchange returned. The Go test judges it.
//
//   node tsclient.cjs stdio <mcpgate binary>
//   node tsclient.cjs sse <http://127.0.0.1:PORT/sse>
//   node tsclient.cjs streamable <http://127.0.0.1:PORT/mcp>
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { SSEClientTransport } = require("@modelcontextprotocol/sdk/client/sse.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { CreateMessageRequestSchema, ElicitRequestSchema } = require("@modelcontextprotocol/sdk/types.js");

async function main() {
  const [mode, target] = process.argv.slice(2);
  let transport;
  if (mode === "stdio") transport = new StdioClientTransport({ command: target, args: ["fixture", "--stdio"], stderr: "inherit" });
  else if (mode === "sse") transport = new SSEClientTransport(new URL(target));
  else transport = new StreamableHTTPClientTransport(new URL(target));

  const client = new Client({ name: "mcpgate-ts-test", version: "1.0.0" }, { capabilities: { sampling: {}, elicitation: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => ({
    model: "ts-test-model", role: "assistant",
    content: { type: "text", text: "sampled: " + req.params.messages[0].content.text },
  }));
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { username: "ts", email: "ts@example.com" } }));
  await client.connect(transport);
  // Progress is recorded as the transport delivers it: the SDK runs
  // notification handlers a tick later than it settles responses, so an
  // onprogress callback misses notifications that share one read with the
  // answer (stdio, SSE), however early the server sent them.
  const progress = [];
  const deliver = transport.onmessage;
  transport.onmessage = (m, extra) => {
    if (m.method === "notifications/progress") progress.push(m.params.progress);
    if (m.id !== undefined && m.result !== undefined && progress.length > 0 && !progress.includes("answer")) progress.push("answer");
    deliver(m, extra);
  };

  const out = { serverVersion: client.getServerVersion(), protocolVersion: transport.protocolVersion ?? null };
  out.tools = (await client.listTools()).tools.map((t) => t.name);
  out.simple = await client.callTool({ name: "test_simple_text", arguments: {} });
  try {
    await client.callTool({ name: "test_sampling", arguments: {} });
    out.invalidArgs = "no error";
  } catch (e) {
    out.invalidArgs = { code: e.code, message: e.message };
  }
  out.sampling = await client.callTool({ name: "test_sampling", arguments: { prompt: "hello" } });
  out.elicitation = await client.callTool({ name: "test_elicitation", arguments: { message: "who?" } });
  out.progressResult = await client.callTool({ name: "test_tool_with_progress", arguments: {} }, undefined, {
    onprogress: () => {},
  });
  out.progress = progress;
  out.errorTool = await client.callTool({ name: "test_error_handling", arguments: {} });
  out.resource = await client.readResource({ uri: "test://static-text" });
  out.template = await client.readResource({ uri: "test://template/42/data" });
  try {
    await client.readResource({ uri: "test://nope" });
    out.unknownResource = "no error";
  } catch (e) {
    out.unknownResource = { code: e.code };
  }
  out.prompt = await client.getPrompt({ name: "test_prompt_with_arguments", arguments: { arg1: "a", arg2: "b" } });
  out.ping = await client.ping();
  out.completion = await client.complete({ ref: { type: "ref/prompt", name: "test_prompt_with_arguments" }, argument: { name: "arg1", value: "pa" } });
  await client.close();
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
