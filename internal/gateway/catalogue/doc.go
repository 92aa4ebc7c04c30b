// Package catalogue mirrors one backend MCP server's catalogue into an
// mcp.Server and forwards calls to it, byte for byte: the core of the
// gateway's aggregation.
//
// A Backend owns an mcp.Client connected to one backend. Sync lists the
// backend's tools, resources, resource templates and prompts (every page).
// It registers each in the front server under a prefixed name, with the
// backend's own definition bytes. Only the "name" member's value is
// spliced, so unknown fields, _meta, key order and whitespace survive. Each
// registered entry's handler forwards to the backend and returns its raw
// result or its raw JSON-RPC error; a transport failure becomes -32603 with
// data.backend, so a caller can tell which backend is down.
//
// When a backend's connection ends, Down takes its entries out of the
// front, but leaves tombstones in the ledger. A call naming one answers
// -32603 with data.backend too, to callers allowed to see the entry (pass
// Claims.Unknown as mcp.Options.Unknown). It does so until the backend
// syncs again or is removed. What a backend sends about a call in flight
// reaches the caller through a bounded queue per call (outbox.go), so a
// slow caller never holds up the backend.
//
// Several backends relay into one server through a shared Claims ledger,
// which decides who owns each name and URI: the first to register keeps
// it, a later one is skipped and logged, never fatal.
package catalogue
