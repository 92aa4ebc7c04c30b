// Package stdio carries MCP over a pair of byte streams as newline-delimited
// JSON: one message per line, no embedded line breaks, logs never on the
// protocol stream.
//
// Both ends are here. Serve answers one session of an mcp.Server on a
// reader and a writer (a server launched by a desktop client reads stdin and
// writes stdout). Command starts a backend MCP server as a child process and
// returns a Conn that an mcp.Client speaks through; NewConn does the same
// over any pipe pair.
//
// A child process runs in its own process group, so that closing a Conn
// takes down everything the backend spawned, not just its first process.
// Its stdin is closed first, the polite MCP shutdown. After a grace period
// the group gets SIGTERM, then SIGKILL. StartProgram gives the same care
// to a program that does not speak MCP on its streams. Command needs a
// Unix system; Serve and NewConn work anywhere.
//
// Lines are bounded (4 MiB by default). An oversized line is consumed and
// answered with an error; the stream goes on. Outgoing messages are written
// whole, one per line, under a lock, and a relayed payload that arrived
// pretty-printed is compacted onto one line — compaction removes only JSON
// whitespace, so every value, digit and unknown field stays as it was.
package stdio
