// A 2025-era client on the official TypeScript SDK, for the Go tests: it
// connects to the Streamable HTTP endpoint in argv[2], answers elicitation
// with {name: "Ada"}, calls the tools named in argv[3..] with no
// arguments, and prints, as JSON, the tools listed and each call's result
// (or error). The Go test judges it.
//
//   node ts_call.cjs http://127.0.0.1:PORT/mcp tool...
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { ElicitRequestSchema } = require("@modelcontextprotocol/sdk/types.js");

async function main() {
  const [url, ...tools] = process.argv.slice(2);
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name: "mcpgate-ts-call", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  let elicited = 0;
  client.setRequestHandler(ElicitRequestSchema, async () => {
    elicited++;
    return { action: "accept", content: { name: "Ada" } };
  });
  await client.connect(transport);
  const out = { protocolVersion: transport.protocolVersion ?? null, calls: {} };
  out.tools = (await client.listTools()).tools.map((t) => t.name);
  for (const name of tools) {
    try {
      out.calls[name] = await client.callTool({ name, arguments: {} });
    } catch (e) {
      out.calls[name] = { error: { code: e.code, message: e.message } };
    }
  }
  out.elicited = elicited;
  await client.close();
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + "\n");
  process.exit(1);
});
