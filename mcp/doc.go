// Package mcp is mcpgate's Model Context Protocol engine: the server that
// answers MCP sessions (lifecycle, registries, the tools/call contract) and
// the client that reaches MCP servers, both independent of any transport.
//
// The model follows net/http. A Handler answers one request; a Middleware
// wraps a Handler in another; a Server routes methods to Handlers and owns
// the registries of tools, resources, resource templates and prompts.
// Transports (packages mcphttp, stdio) move bytes and hand each message to
// a Session.
//
// The engine owns each request: before any middleware runs it resolves the
// entry a gated request names (Request.Target, as ServeMux sets
// r.Pattern), and after the answer it classifies the outcome once
// (Outcome). Observers — the audit log, metrics, traces — are told both
// (Observer), and derive neither.
//
// Payloads stay raw JSON from end to end (see package jsonrpc): a handler
// returns the raw bytes of its result, and a relayed result or error is
// written back exactly as it arrived.
//
// Access control plugs in through a Gate, which the engine consults before
// every tools/call, resources/read and prompts/get — after the entry is
// found, before its arguments are looked at, as the innermost middleware —
// and when filtering lists.
package mcp
