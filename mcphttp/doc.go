// Package mcphttp carries MCP over HTTP, both ways: the Streamable HTTP
// transport (stateful with sessions, or stateless) and the legacy HTTP+SSE
// transport of 2024-11-05, as servers in front of an mcp.Server and as
// client Conns that reach someone else's server.
//
// The server side enforces the HTTP rules of the MCP specification at least
// as strictly as the official TypeScript SDK: 406, 415, 405, 413, 404 for
// an unknown session, 400 for a missing one. It refuses DNS-rebinding
// attempts (Guard). It binds each session to the identity that created
// it: any other identity presenting its id is told it does not exist.
//
// A client Conn given no HTTP client makes its own (NewHTTPClient) and
// closes it with itself; one given a client leaves it to its owner.
package mcphttp
