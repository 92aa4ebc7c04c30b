// gate.go is the hook access control fills. The engine calls it at the one
// place every gated method passes through, so that no transport and no
// method is a side door (the server seed 003 describes had two).

package mcp

import "context"

// EntryKind names the registry an entry belongs to.
type EntryKind string

const (
	KindTool     EntryKind = "tool"
	KindResource EntryKind = "resource"
	KindPrompt   EntryKind = "prompt"
	// KindSession is not a registry's: it is what the gate is asked about
	// when a caller opens a session or a stream (AdmitSession), so that
	// opening them is rate limited like a call.
	KindSession EntryKind = "session"
)

// Entry is what the gate decides on: which entry, and the minimum role its
// registration asked for ("" for the lowest); and who serves it.
type Entry struct {
	Kind    EntryKind
	Name    string // tool or prompt name, resource URI or URI template
	MinRole string
	// Owner names who serves the entry, as its registration said: a
	// gateway's backend ("" for an entry of the server's own).
	Owner string
	// Origin is the name the owner itself knows a tool or prompt by,
	// where the registration gave one (a gateway's backend's own name,
	// before prefixing and renaming).
	Origin string
}

// A Gate decides what a caller (found in ctx by IdentityFrom) may see and
// use.
type Gate interface {
	// Visible reports whether the entry appears in the caller's lists.
	Visible(ctx context.Context, e Entry) bool
	// Admit is called before every tools/call, resources/read and
	// prompts/get once the entry is found and before its arguments are
	// checked or its handler runs. A non-nil error refuses the call; a
	// *jsonrpc.Error chooses the code the caller sees.
	Admit(ctx context.Context, e Entry) error
}

// A RequestGate is a Gate that reads the request it admits too (its
// arguments, its client): the engine calls AdmitRequest in Admit's place
// for a request that names an entry.
type RequestGate interface {
	Gate
	AdmitRequest(ctx context.Context, e Entry, r *Request) error
}

// openGate lets everyone see and use everything; it is the default when no
// access control is configured.
type openGate struct{}

func (openGate) Visible(context.Context, Entry) bool { return true }
func (openGate) Admit(context.Context, Entry) error  { return nil }

// AdmitSession asks the gate whether the caller in ctx may open a session
// (what names how: "initialize", or "sse" for a legacy SSE stream, which
// is a session of its own before any initialize). A flood of
// sessions is otherwise free: initialize is no gated call, and each session
// held costs the server memory and a place under its caps.
func (s *Server) AdmitSession(ctx context.Context, what string) error {
	return s.gate.Admit(ctx, Entry{Kind: KindSession, Name: what})
}
