// A client on the official TypeScript SDK for the replica tests
// (replicas_test.go): one Streamable HTTP session (2025-11-25) through the
// load balancer, driven line by line on stdin, answering one JSON line per
// command on stdout.
//
//   node replicas.cjs <balancer /mcp URL> <one replica's /mcp URL> <token>
//
// Commands:
//   calls N   N calls of fx__test_simple_text through the balancer, in turn
//   slow      fx__slow_compute (30 s) sent straight to the one replica; the
//             answer comes when it settles ({"slow": "ok"|"failed", ...})
//   quit
// The session id never changes: what the SDK sends is what the first
// answer gave, whichever replica serves each request.
const readline = require("node:readline");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

const [balancer, direct, token] = process.argv.slice(2);
let straight = false; // the next POST goes to the one replica
const say = (o) => process.stdout.write(JSON.stringify(o) + "\n");

async function main() {
  const transport = new StreamableHTTPClientTransport(new URL(balancer), {
    requestInit: { headers: { Authorization: "Bearer " + token } },
    fetch: (url, init) => {
      if (straight && init && init.method === "POST") {
        straight = false;
        url = direct;
      }
      return fetch(url, init);
    },
  });
  const client = new Client({ name: "mcpgate-replicas-test", version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);
  const session = transport.sessionId;
  say({ connected: session, version: transport.protocolVersion ?? null });

  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    const [cmd, arg] = line.trim().split(/\s+/);
    if (cmd === "quit") break;
    if (cmd === "calls") {
      const failed = [];
      let ok = 0;
      for (let i = 0; i < Number(arg); i++) {
        try {
          const r = await client.callTool({ name: "fx__test_simple_text", arguments: {} });
          if (r.isError) failed.push("isError");
          else ok++;
        } catch (e) {
          failed.push(String(e && e.message || e));
        }
      }
      say({ calls: Number(arg), ok, failed, session: transport.sessionId });
    } else if (cmd === "slow") {
      straight = true;
      client.callTool({ name: "fx__slow_compute", arguments: { seconds: 30 } }, undefined, { timeout: 120000 })
        .then(() => say({ slow: "ok" }), (e) => say({ slow: "failed", error: String(e && e.message || e) }));
      say({ slowSent: true });
    }
  }
  await client.close();
}

main().catch((e) => { say({ fatal: String(e && e.stack || e) }); process.exit(1); });
