// catalogue.go lists the catalogue as one caller sees it: every tool,
// resource, template and prompt the gate shows them, with the least role of
// each. An operator checks a policy with it before a user meets it (the
// admin console), without going through a session.

package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// CatalogueEntry is one entry of Catalogue.
type CatalogueEntry struct {
	Entry
	Template    bool   // a resource template (Name is its URI template)
	Description string // as the entry lists it
	// Flags say why its definition looks aimed at the model (Suspicious).
	Flags []string
	// Definition is the entry's as the caller lists it.
	Definition json.RawMessage
}

// Catalogue is every entry the caller in ctx would see in the lists, in
// list order: tools, resources, templates, prompts.
func (s *Server) Catalogue(ctx context.Context) []CatalogueEntry {
	var out []CatalogueEntry
	add := func(template bool) func(e Entry, def json.RawMessage) {
		return func(e Entry, def json.RawMessage) {
			if s.gate.Visible(ctx, e) {
				d, _ := jsonrpc.LookupString(def, "description")
				out = append(out, CatalogueEntry{Entry: e, Template: template, Description: d, Flags: Suspicious(def), Definition: def})
			}
		}
	}
	eachEntry(s.tools, add(false))
	eachEntry(s.resources, add(false))
	eachEntry(s.templates, add(true))
	eachEntry(s.prompts, add(false))
	return out
}

func eachEntry[T any](r *registry[T], fn func(Entry, json.RawMessage)) {
	r.each(func(sl *slot[T]) bool { fn(sl.entry, sl.def); return true })
}

// SessionInfo is one open session, as SessionList shows it: no secret,
// nothing the client sent but its name.
type SessionInfo struct {
	ID        string
	Identity  Identity
	Transport string
	Started   time.Time
	Version   string // the revision negotiated ("" before initialize)
	Client    string // clientInfo.name
}

// SessionList is every open session, oldest first.
func (s *Server) SessionList() []SessionInfo {
	s.mu.Lock()
	live := make([]*Session, 0, len(s.sessions))
	for ss := range s.sessions {
		live = append(live, ss)
	}
	s.mu.Unlock()
	out := make([]SessionInfo, 0, len(live))
	for _, ss := range live {
		info := SessionInfo{ID: ss.id, Identity: ss.identity, Transport: ss.transport, Started: ss.started}
		if v := ss.version.Load(); v != nil {
			info.Version = *v
		}
		ss.mu.Lock()
		info.Client, _ = jsonrpc.LookupString(ss.clientInfo, "name")
		ss.mu.Unlock()
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b SessionInfo) int { return a.Started.Compare(b.Started) })
	return out
}
