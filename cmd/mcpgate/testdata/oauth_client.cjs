// The official TypeScript SDK's own OAuth client (its auth support:
// protected resource metadata from the 401, authorization server
// discovery, dynamic client registration, PKCE, the resource indicator,
// the token exchange) connecting to `mcpgate serve` through an external
// authorization server (oauth_test.go).
//
//   node oauth_client.cjs <gateway /mcp URL>
//
// The one step a person does, signing in at the authorization endpoint,
// is a fetch that follows the authorization URL to its redirect (the test
// server approves at once). Prints one JSON line per step.
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { UnauthorizedError } = require("@modelcontextprotocol/sdk/client/auth.js");

const [url] = process.argv.slice(2);
const say = (o) => process.stdout.write(JSON.stringify(o) + "\n");

// An in-memory OAuthClientProvider, as an application would keep it.
class Provider {
  get redirectUrl() { return "http://127.0.0.1:9/callback"; }
  get clientMetadata() {
    return {
      client_name: "mcpgate oauth test",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() { return this.client; }
  saveClientInformation(c) { this.client = c; }
  tokens() { return this.saved; }
  saveTokens(t) { this.saved = t; }
  redirectToAuthorization(u) { this.authorizationUrl = u; }
  saveCodeVerifier(v) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
}

async function connect(provider) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  const client = new Client({ name: "mcpgate-oauth-test", version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);
  return { client, transport };
}

async function main() {
  const provider = new Provider();
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  const client = new Client({ name: "mcpgate-oauth-test", version: "1.0.0" }, { capabilities: {} });
  try {
    await client.connect(transport);
    say({ error: "connected without signing in" });
    process.exit(1);
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) throw e;
  }
  const au = provider.authorizationUrl;
  say({ step: "authorize", client_id: provider.client && provider.client.client_id, resource: au.searchParams.get("resource"),
    scope: au.searchParams.get("scope"), method: au.searchParams.get("code_challenge_method") });
  const res = await fetch(au, { redirect: "manual" });
  const code = new URL(res.headers.get("location")).searchParams.get("code");
  await transport.finishAuth(code);
  say({ step: "token", token_type: provider.saved.token_type, refresh: !!provider.saved.refresh_token });

  const again = await connect(provider);
  const tools = await again.client.listTools();
  const r = await again.client.callTool({ name: "test_simple_text", arguments: {} });
  say({ step: "called", tools: tools.tools.length, text: r.content[0].text });
  await again.client.close();
}

main().catch((e) => { say({ error: String((e && e.stack) || e) }); process.exit(1); });
