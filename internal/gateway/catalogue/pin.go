// pin.go asks, at every Sync, whether what a backend lists is what was
// approved (Options.Pin; the gateway keeps the pins, store/pins.go). A
// tool or prompt whose definition changed is held until an admin
// approves the change, or served and alarmed, as Pin decides. A held
// entry is out of every list, and a call of it is answered
// definition_changed.

package catalogue

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// Listed is one entry as the backend lists it now, for Pin.
type Listed struct {
	Kind        string // "tool" or "prompt"
	Name        string // the backend's own
	Fingerprint string
	Definition  json.RawMessage // the backend's own
}

// Verdict is Pin's answer for one sighting.
type Verdict struct {
	// Hold withholds the entry: its definition changed, unapproved.
	Hold bool
}

// Pinner decides, for what a backend lists, which entries to hold.
type Pinner func(ctx context.Context, backend string, seen []Listed) []Verdict

// fingerprinted are the members of a definition that say what an entry
// does; _meta counts only for its ui member (MCP Apps).
var fingerprinted = map[kind][]string{
	kindTool:     {"name", "title", "description", "inputSchema", "outputSchema", "annotations"},
	kindPrompt:   {"name", "title", "description", "arguments"},
	kindTemplate: {"uriTemplate", "name", "title", "description", "mimeType"},
	kindResource: {"uri", "name", "title", "description", "mimeType"},
}

// pinnedApps is pinned for the App resources (ui://) among es; other
// resources are served unpinned.
func (b *Mirror) pinnedApps(ctx context.Context, es []entry) (serve, held []entry) {
	var apps, others []entry
	for _, e := range es {
		if strings.HasPrefix(e.orig, appScheme) {
			apps = append(apps, e)
		} else {
			others = append(others, e)
		}
	}
	serve, held = b.pinned(ctx, kindResource, apps)
	return append(others, serve...), held
}

// fingerprint is the SHA-256 of def's fingerprinted members, encoded
// canonically (keys sorted, no spaces, numbers as written), so that key
// order and spacing do not count as a change. A member counts with every
// key a reader could take for it (membersAs): a change hidden in a twin is
// a change.
func fingerprint(k kind, def json.RawMessage) string {
	canon := map[string]any{}
	for _, m := range fingerprinted[k] {
		if v, ok := canonical(m, membersAs(def, m)); ok {
			canon[m] = v
		}
	}
	var uis []member
	for _, meta := range membersAs(def, "_meta") {
		for _, ui := range membersAs(meta.value, "ui") {
			uis = append(uis, member{meta.key + "." + ui.key, ui.value})
		}
	}
	if v, ok := canonical("_meta.ui", uis); ok {
		canon["_meta.ui"] = v
	}
	b, _ := json.Marshal(canon)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// member is one member of an object: its key, decoded, and raw value.
type member struct {
	key   string
	value json.RawMessage
}

// membersAs are the members of obj that a reader may take for the one
// named name. That is the key itself, once or more: readers differ on
// which of two wins. And it is each key that folds with it: Go's
// encoding/json, as in an SDK's Tool, matches keys without case.
func membersAs(obj json.RawMessage, name string) []member {
	var out []member
	_ = jsonrpc.MemberKeys(obj, func(k []byte, v json.RawMessage) bool {
		if jsonrpc.EqualFold(k, name) {
			out = append(out, member{string(k), v})
		}
		return true
	})
	return out
}

// canonical is what the fingerprint holds of ms, the members taken for
// name. When ms is that one key once, it is the value alone, as
// fingerprints always held it: pins made before stay valid. Else it is
// each member's key and value, in order, so that changing whichever one
// a reader picks changes the fingerprint.
func canonical(name string, ms []member) (any, bool) {
	if len(ms) == 1 && ms[0].key == name {
		return decodeNumbers(ms[0].value)
	}
	var out []any
	for _, m := range ms {
		v, _ := decodeNumbers(m.value)
		out = append(out, map[string]any{"key": m.key, "value": v})
	}
	return out, len(out) > 0
}

// decodeNumbers decodes raw with its numbers kept as written.
func decodeNumbers(raw json.RawMessage) (any, bool) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	return v, d.Decode(&v) == nil
}

// pinned splits es into the entries to serve and those to hold, as Pin
// says; without a Pin every entry is served.
func (b *Mirror) pinned(ctx context.Context, k kind, es []entry) (serve, held []entry) {
	if b.pin == nil || len(es) == 0 {
		return es, nil
	}
	seen := make([]Listed, len(es))
	for i, e := range es {
		seen[i] = Listed{Kind: roleKind(k), Name: e.orig, Fingerprint: b.fingerprintOf(k, e.orig, e.raw), Definition: e.raw}
	}
	verdicts := b.pin(ctx, b.name, seen)
	serve = es[:0:0]
	for i, e := range es {
		if i < len(verdicts) && verdicts[i].Hold {
			held = append(held, e)
			continue
		}
		serve = append(serve, e)
	}
	return serve, held
}

// DefinitionChanged is the answer to a call of a held entry.
func DefinitionChanged(backend, kindName, name string) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInternalError,
		"the definition of "+kindName+" "+name+" changed at backend "+backend+" and awaits an admin's approval",
		map[string]string{"kind": string(mcp.KindDefinitionChanged), "backend": backend, "name": name})
}

// hold replaces the backend's tombstones with stones for its held
// entries: calls of them are answered DefinitionChanged. It is Sync's
// last step (the backend is up: its other names answer live).
func (b *Mirror) hold(held map[kind][]entry) {
	c := b.claims
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forget(b.name)
	for k, es := range held {
		for _, e := range es {
			entry := mcp.Entry{Kind: mcpKind(k), Name: e.key, MinRole: b.minRole(roleKind(k), e.orig), Owner: b.name, Origin: e.orig}
			c.bury(k, b.name, []mcp.Entry{entry}, DefinitionChanged(b.name, roleKind(k), e.key))
		}
	}
}
