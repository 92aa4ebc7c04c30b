// registry.go is the ordered catalogue behind each list method. Entries
// keep their registration order (seed 003 listed from a map, in a new order
// every time), each entry's list JSON is encoded once when registered, and
// pages are cut with an opaque cursor.

package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

type slot[T any] struct {
	value T
	def   json.RawMessage // the entry as the list method sends it
	// derived is the entry's compact form and what the search mode ranks
	// it by (compact.go), made when a view first needs them.
	derived *derived
	// views are the views that list the entry (compact.go; 0: every one).
	views uint8
	entry Entry
}

type registry[T any] struct {
	server  *Server
	key     func(T) string
	changed string // the list_changed notification

	mu    sync.RWMutex
	order []*slot[T]
	index map[string]*slot[T]
}

func newRegistry[T any](s *Server, key func(T) string, changed string) *registry[T] {
	return &registry[T]{server: s, key: key, changed: changed, index: map[string]*slot[T]{}}
}

// put adds or replaces entries; a replaced entry keeps its place.
func (r *registry[T]) put(slots ...*slot[T]) {
	r.mu.Lock()
	for _, sl := range slots {
		k := r.key(sl.value)
		if old, ok := r.index[k]; ok {
			*old = *sl
			continue
		}
		r.index[k] = sl
		r.order = append(r.order, sl)
	}
	r.mu.Unlock()
	r.server.broadcast(r.changed, nil, nil)
}

// remove deletes entries by key and reports how many existed.
func (r *registry[T]) remove(keys ...string) int {
	r.mu.Lock()
	removed := map[*slot[T]]bool{}
	for _, k := range keys {
		if sl, ok := r.index[k]; ok {
			delete(r.index, k)
			removed[sl] = true
		}
	}
	if len(removed) > 0 {
		kept := r.order[:0]
		for _, sl := range r.order {
			if !removed[sl] {
				kept = append(kept, sl)
			}
		}
		clear(r.order[len(kept):])
		r.order = kept
	}
	r.mu.Unlock()
	if len(removed) > 0 {
		r.server.broadcast(r.changed, nil, nil)
	}
	return len(removed)
}

// find is get by the name's bytes, with the entry's key: a name found
// costs no string of its own.
func (r *registry[T]) find(name []byte) (T, Entry, string, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	sl, ok := r.index[string(name)]
	if !ok {
		var zero T
		return zero, Entry{}, "", false
	}
	return sl.value, sl.entry, r.key(sl.value), true
}

func (r *registry[T]) get(key string) (T, Entry, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	sl, ok := r.index[key]
	if !ok {
		var zero T
		return zero, Entry{}, false
	}
	return sl.value, sl.entry, true
}

// each calls fn for every entry in order, under the read lock; fn must not
// touch the registry.
func (r *registry[T]) each(fn func(*slot[T]) bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, sl := range r.order {
		if !fn(sl) {
			return
		}
	}
}

// list answers a list method: the entries the caller may see, from the
// cursor on, one page at a time, as {"<field>":[…],"nextCursor":"…"}.
func (r *registry[T]) list(ctx context.Context, params json.RawMessage, field string) (json.RawMessage, error) {
	start, err := cursorFrom(params)
	if err != nil {
		return nil, err
	}
	size := r.server.opts.PageSize
	gate := r.server.gate
	view := viewOf(ctx)
	compact, bit := view != ViewFull, viewBit(view)
	b := make([]byte, 0, 256)
	b = append(b, '{', '"')
	b = append(b, field...)
	b = append(b, `":[`...)
	n, next := 0, -1
	r.mu.RLock()
	if start > len(r.order) {
		r.mu.RUnlock()
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: cursor is out of range", nil)
	}
	for i := start; i < len(r.order); i++ {
		sl := r.order[i]
		if sl.views != 0 && sl.views&bit == 0 || !gate.Visible(ctx, sl.entry) {
			continue
		}
		if n == size {
			next = i
			break
		}
		if n > 0 {
			b = append(b, ',')
		}
		if c := sl.derived.compactDef(); compact && c != nil {
			b = append(b, c...)
		} else {
			b = append(b, sl.def...)
		}
		n++
	}
	r.mu.RUnlock()
	b = append(b, ']')
	if next >= 0 {
		b = append(b, `,"nextCursor":`...)
		b = jsonrpc.AppendString(b, encodeCursor(next))
	}
	return append(b, '}'), nil
}

// Cursors are opaque to clients; inside they are a position in the
// registration order, versioned so that the form can change.
func encodeCursor(i int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("v1:" + strconv.Itoa(i)))
}

func cursorFrom(params json.RawMessage) (int, error) {
	if len(params) == 0 {
		return 0, nil
	}
	raw, err := jsonrpc.Lookup(params, "cursor")
	if err != nil {
		return 0, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: params must be an object", nil)
	}
	if raw == nil || string(raw) == "null" {
		return 0, nil
	}
	var c string
	if json.Unmarshal(raw, &c) != nil {
		return 0, badCursor()
	}
	dec, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(dec) < 4 || string(dec[:3]) != "v1:" {
		return 0, badCursor()
	}
	i, err := strconv.Atoi(string(dec[3:]))
	if err != nil || i < 0 {
		return 0, badCursor()
	}
	return i, nil
}

func badCursor() error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: unknown cursor", nil)
}

// HasTool reports whether a tool of that name is registered.
func (s *Server) HasTool(name string) bool { _, _, ok := s.tools.get(name); return ok }

// HasPrompt reports whether a prompt of that name is registered.
func (s *Server) HasPrompt(name string) bool { _, _, ok := s.prompts.get(name); return ok }
