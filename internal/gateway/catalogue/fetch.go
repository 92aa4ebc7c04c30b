// fetch.go reads a backend's catalogue: every page of every list the
// backend serves, each entry kept as the raw bytes the backend sent.

package catalogue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// maxPages bounds a list walk, so that a backend answering the same cursor
// forever cannot hold Sync.
const maxPages = 10000

// catalogue is one snapshot of a backend's entries, raw.
type catalogue struct {
	tools, resources, templates, prompts []json.RawMessage
}

// list describes one list method.
type list struct {
	method     string
	field      string // the array member of the result
	capability string // the initialize capability that offers it
}

var (
	toolsList     = list{"tools/list", "tools", "tools"}
	resourcesList = list{"resources/list", "resources", "resources"}
	templatesList = list{"resources/templates/list", "resourceTemplates", "resources"}
	promptsList   = list{"prompts/list", "prompts", "prompts"}
)

func (b *Mirror) fetch(ctx context.Context) (*catalogue, error) {
	var c catalogue
	for _, l := range []struct {
		list
		into *[]json.RawMessage
	}{{toolsList, &c.tools}, {resourcesList, &c.resources}, {templatesList, &c.templates}, {promptsList, &c.prompts}} {
		entries, err := b.fetchList(ctx, l.list)
		if err != nil {
			return nil, err
		}
		*l.into = entries
	}
	return &c, nil
}

// fetchList follows nextCursor to the end. A backend that does not declare
// the capability, or answers -32601, has no entries of that kind.
func (b *Mirror) fetchList(ctx context.Context, l list) ([]json.RawMessage, error) {
	if !b.offers(l.capability) {
		return nil, nil
	}
	var all []json.RawMessage
	var params json.RawMessage
	for range maxPages {
		res, err := b.client.Call(ctx, l.method, params)
		if err != nil {
			var je *jsonrpc.Error
			if errors.As(err, &je) && je.Code == jsonrpc.CodeMethodNotFound {
				return nil, nil
			}
			return nil, fmt.Errorf("relay: backend %s: %s: %w", b.name, l.method, err)
		}
		var page []json.RawMessage
		if raw, err := jsonrpc.Lookup(res, l.field); err != nil {
			return nil, fmt.Errorf("relay: backend %s: %s: result is not an object", b.name, l.method)
		} else if raw != nil && string(raw) != "null" {
			// Unmarshalling into RawMessage copies each element's bytes as
			// they are.
			if err := json.Unmarshal(raw, &page); err != nil {
				return nil, fmt.Errorf("relay: backend %s: %s: %s is not an array", b.name, l.method, l.field)
			}
		}
		all = append(all, page...)
		cursor, ok := jsonrpc.LookupString(res, "nextCursor")
		if !ok || cursor == "" {
			return all, nil
		}
		params = jsonrpc.AppendString([]byte(`{"cursor":`), cursor)
		params = append(params, '}')
	}
	return nil, fmt.Errorf("relay: backend %s: %s: more than %d pages", b.name, l.method, maxPages)
}

// offers reports whether the backend declared capability at initialize. A
// client not (yet) initialized is asked anyway.
func (b *Mirror) offers(capability string) bool {
	init := b.client.InitializeResult()
	if init == nil {
		return true
	}
	caps, err := jsonrpc.Lookup(init, "capabilities")
	if err != nil || len(caps) == 0 || caps[0] != '{' {
		return true
	}
	v, err := jsonrpc.Lookup(caps, capability)
	return err == nil && v != nil && string(v) != "null"
}
