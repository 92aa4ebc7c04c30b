// Package auth resolves every HTTP request to an mcp.Identity before
// anything reaches MCP (spec §7).
//
// A request carries `Authorization: Bearer X`. X is either a service token
// or a JWT. A service token ("mcpg_…") is minted by NewToken, stored only
// as its SHA-256, and verified against the in-memory index Tokens without a
// database round trip. A JWT is verified by a JWTVerifier pinned to one
// algorithm and one key source: an HMAC secret, a PEM public key or a JWKS
// URL. The Authenticator is an http.Handler wrapper: it verifies the
// credential, asks the caller whether the role is known (RoleCheck: roles
// belong to package policy, not here), and puts the identity in the
// request's context with mcp.WithIdentity. Anything else gets 401 with
// `WWW-Authenticate: Bearer` and never reaches the wrapped handler.
//
// A credential never appears in a log line, an error message or a
// response body: logs carry the token id and a reason code, and the reason
// a client reads is one of a fixed set of phrases.
//
// NoAuth is for local development: it gives every request one configured
// identity, and CheckLoopback lets the command refuse it on an address
// reachable from elsewhere.
package auth
