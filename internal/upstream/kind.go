package upstream

// Kind is how an upstream MCP server is reached. The gateway's backends
// take every kind but KindContract; the proxy takes KindStdio, KindHTTP,
// KindSSE and KindContract.
type Kind string

// The kinds of upstream.
const (
	// KindStdio is a command, started and supervised.
	KindStdio Kind = "stdio"
	// KindHTTP is a Streamable HTTP endpoint.
	KindHTTP Kind = "http"
	// KindSSE is a legacy HTTP+SSE endpoint.
	KindSSE Kind = "sse"
	// KindProxy is a running `mcpgate proxy`, reached over the framed
	// wire at its ws:// URL.
	KindProxy Kind = "proxy"
	// KindProcess is a program the gateway starts with PORT set, with
	// `mcpgate proxy` beside it: a local stand-in for a tool container.
	KindProcess Kind = "process"
	// KindContract is a container-contract program, reached at its /mcp.
	KindContract Kind = "contract"
)

// PerClient reports whether a backend of kind k can open a session of
// its own for each client (a command each, or an HTTP session each).
func (k Kind) PerClient() bool { return k == KindStdio || k == KindHTTP || k == KindSSE }
