// Package mcp is mcpgate's Model Context Protocol engine. It holds the
// server that answers MCP requests and the client that reaches MCP
// servers. Neither knows the transport.
//
// The model follows net/http. A Handler answers one request, and a
// Middleware wraps a Handler in another. A Server routes methods to
// Handlers and owns the registries of tools, resources, resource templates
// and prompts. Transports (packages mcphttp, stdio, wiremcp) move bytes and
// hand each message to a Session, or to the Server for a request of the
// sessionless 2026-07-28 revision.
//
// The engine owns each request. Before any middleware runs, it resolves
// the entry a gated request names (Request.Target), as ServeMux sets
// r.Pattern. After the answer, it classifies the outcome once (Outcome).
// Observers such as the audit log, metrics and traces are told both
// (Observer), and derive neither.
//
// Payloads stay raw JSON from end to end (see package jsonrpc). A handler
// returns the raw bytes of its result. A relayed result or error is written
// back exactly as it arrived.
//
// Access control plugs in through a Gate. The engine asks it before every
// tools/call, resources/read and prompts/get, and when it filters a list.
// It is asked after the entry is found and before the arguments are read:
// it is the innermost middleware.
//
// A Client sends a request with Call, or with Send when the request
// carries _meta members or headers of its own (Outbound). A failure its
// transport made is a *TransportError; the server's own error is a
// *jsonrpc.Error holding the server's bytes.
package mcp
