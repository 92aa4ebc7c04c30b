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
// order and spacing do not count as a change. A definition that readers
// could read apart (definitionTwins, twins.go) is fingerprinted byte for
// byte: a change hidden in a twin is a change.
func fingerprint(k kind, def json.RawMessage) string {
	if _, _, twins := definitionTwins(k, def); twins {
		sum := sha256.Sum256(def)
		return hex.EncodeToString(sum[:])
	}
	canon := map[string]any{}
	add := func(name string, raw json.RawMessage) {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var v any
		if d.Decode(&v) == nil {
			canon[name] = v
		}
	}
	for _, m := range fingerprinted[k] {
		if v, err := jsonrpc.Lookup(def, m); err == nil && len(v) > 0 {
			add(m, v)
		}
	}
	if meta, err := jsonrpc.Lookup(def, "_meta"); err == nil && len(meta) > 0 {
		if ui, err := jsonrpc.Lookup(meta, "ui"); err == nil && len(ui) > 0 {
			add("_meta.ui", ui)
		}
	}
	b, _ := json.Marshal(canon)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
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
