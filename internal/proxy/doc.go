// Package proxy is the program that sits beside a tool container's own MCP
// server and relays to it (docs/wire.md §4–§5). This half of it is everything
// the proxy needs from that server and its program, independent of the
// wire it speaks outward:
//
//   - Upstream is the one MCP session with the server: dialled lazily on the
//     first exchange, kept while it lives, dialled afresh after it dies, and
//     never used to retry an exchange behind its caller's back. Results and
//     JSON-RPC errors come back as the bytes the server wrote. The session
//     is of the server's era (mcp.Client.Connect): a 2026-07-28 server is
//     spoken to sessionless, the proxy adding what the wire's exchanges do
//     not say (sessionless.go).
//   - Supervisor starts a stdio server itself, restarts it with backoff when
//     it dies, and feeds it secrets as its environment.
//   - Contract is the client of a program that follows the container
//     contract (POST /register, POST /secrets).
//   - ParseInfo and ReadInfo read the image's DIVERGE.md.
//   - SecretsGate holds exchanges until the first secrets feed when the image
//     declares secrets.
//   - The server keeps the MCP server's order on the wire (order.go). An
//     answer is written after every notification the server sent before it
//     has been written on each open notification stream. A call's progress
//     and log messages so reach the gateway during the call.
//
// Secret values never appear in anything this package logs or returns as
// an error: only names are ever quoted.
package proxy
