// Package backends keeps backend MCP servers connected and their catalogues
// mirrored into the gateway's front mcp.Server, through failures.
//
// A Backend runs one loop: dial (start a stdio command, or reach a
// Streamable HTTP or legacy SSE endpoint), initialize, relay its catalogue
// into the front (catalogue.Mirror.Sync), and wait for the connection to end.
// When it ends, the backend's entries leave the front (so clients get
// list_changed) while calls naming them answer -32603 with data.backend
// (relay tombstones), the state says Down and why, and after a backoff the
// loop starts again. A backend that never comes up costs the gateway nothing
// but its log lines: nothing it does can take the front or another backend
// down.
//
// A Set is the gateway's collection of backends, added and removed by name
// while the others keep serving.
package backends
