// The official TypeScript SDK's own OAuth client (its auth support:
// protected resource metadata from the 401, authorization server
// discovery, dynamic client registration, PKCE, the resource indicator,
// the token exchange) connecting to `mcpgate serve` through an external
// authorization server (oauth_test.go).
//
//   node oauth_client.cjs <gateway /mcp URL> [service token]
//
// The one step a person does, signing in at the authorization endpoint,
// is a fetch that follows the authorization URL to its redirect (the test
// server approves at once). With a service token, the authorization
// server is the gateway's built-in one: the sign-in page is read, and its
// form posted with the token, as a person would; then the SDK refreshes
// its tokens, and a replayed refresh token revokes the grant. Prints one
// JSON line per step.
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { UnauthorizedError, auth } = require("@modelcontextprotocol/sdk/client/auth.js");

const [url, signInToken] = process.argv.slice(2);
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
  const code = signInToken ? await signIn(au, signInToken) : codeOf(await fetch(au, { redirect: "manual" }));
  await transport.finishAuth(code);
  say({ step: "token", token_type: provider.saved.token_type, refresh: !!provider.saved.refresh_token, scope: provider.saved.scope });

  const again = await connect(provider);
  const tools = await again.client.listTools();
  const r = await again.client.callTool({ name: "test_simple_text", arguments: {} });
  say({ step: "called", tools: tools.tools.length, text: r.content[0].text });
  await again.client.close();
  if (!signInToken) return;

  // The SDK refreshes: a new access token and a new refresh token.
  const before = provider.saved;
  const result = await auth(provider, { serverUrl: new URL(url) });
  const after = provider.saved;
  const third = await connect(provider);
  const r3 = await third.client.callTool({ name: "test_simple_text", arguments: {} });
  await third.client.close();
  say({ step: "refreshed", result, rotated: after.refresh_token !== before.refresh_token, new_access: after.access_token !== before.access_token,
    text: r3.content[0].text });

  // The replaced refresh token, replayed, is refused and revokes the grant:
  // the current tokens stop working too.
  const replay = await fetch(new URL("/oauth/token", url), { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: before.refresh_token, client_id: provider.client.client_id }) });
  const replayed = await replay.json();
  const direct = await fetch(url, { method: "POST", headers: { authorization: "Bearer " + after.access_token, "content-type": "application/json",
    accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } } }) });
  say({ step: "replayed", status: replay.status, error: replayed.error, after_status: direct.status });
}

function codeOf(res) {
  return new URL(res.headers.get("location")).searchParams.get("code");
}

// signIn reads the sign-in page and posts its form with the token.
async function signIn(au, token) {
  const page = await (await fetch(au)).text();
  const form = new URLSearchParams();
  const unescape = (v) => v.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(+n)).replace(/&#x([0-9a-f]+);/gi, (_, n) => String.fromCharCode(parseInt(n, 16)))
    .replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
  for (const m of page.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) form.append(unescape(m[1]), unescape(m[2]));
  const client = (page.match(/<strong id="client">([^<]*)<\/strong>/) || [])[1];
  const role = (page.match(/<strong id="role">([^<]*)<\/strong>/) || [])[1];
  form.append("token", token);
  form.append("decision", "allow");
  const res = await fetch(au.origin + au.pathname, { method: "POST", body: form, redirect: "manual",
    headers: { origin: au.origin, "content-type": "application/x-www-form-urlencoded" } });
  const location = new URL(res.headers.get("location"));
  say({ step: "signed-in", client, role, status: res.status, state_kept: location.searchParams.get("state") === au.searchParams.get("state"),
    iss: location.searchParams.get("iss") });
  return location.searchParams.get("code");
}

main().catch((e) => { say({ error: String((e && e.stack) || e) }); process.exit(1); });
