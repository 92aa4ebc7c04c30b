// Package wiremcp is MCP over the container wire (docs/wire.md), on the client
// side: what a gateway or a `mcpgate call` needs to use an `mcpgate proxy`
// as an MCP server.
//
//   - The table (table.go) says which MCP method travels on which channel
//     request and which per-path path; the proxy serves from the same
//     table.
//   - Begin (session.go) dials the framed connection, sends the tools
//     begin and waits for Begun; a Session then feeds secrets, reads the
//     image's Info and makes MCP exchanges on channels of the begun scope.
//   - Dial (conn.go) makes one begun connection an mcp.Conn, so that an
//     mcp.Client drives a proxy as it drives any MCP server. The exchanges
//     go on their channels, beside the notification stream and the
//     server's own requests (tag 12). The little the wire has no form for
//     is answered locally.
//
// Payloads stay raw: a result or error is the bytes the proxy sent.
package wiremcp
