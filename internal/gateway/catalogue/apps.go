// apps.go carries MCP Apps (SEP-1865) through the gateway. An App is an
// HTML resource at a ui:// URI that a tool names in _meta.ui.resourceUri
// (or the older flat _meta["ui/resourceUri"]). Two backends may both
// serve ui://weather/forecast, so the front makes each such URI unique
// with the backend's name as its first segment: ui://gh/weather/forecast.
// A read of the front URI reaches the backend with its own, and the
// contents come back under the front's; everything else, the resource's
// _meta (CSP, permissions, domain) included, passes as the backend wrote
// it.

package catalogue

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

const appScheme = "ui://"

// frontAppURI is the front's URI of the backend's uri: ui:// URIs get the
// backend's segment, others are kept.
func (b *Mirror) frontAppURI(uri string) string {
	if !strings.HasPrefix(uri, appScheme) {
		return uri
	}
	return appScheme + b.name + "/" + uri[len(appScheme):]
}

// backendAppURI undoes frontAppURI; ok is false for a ui:// URI that is
// not this backend's.
func (b *Mirror) backendAppURI(uri string) (string, bool) {
	if !strings.HasPrefix(uri, appScheme) {
		return uri, true
	}
	rest, ok := strings.CutPrefix(uri[len(appScheme):], b.name+"/")
	return appScheme + rest, ok
}

// withAppURIs rewrites the ui:// URIs a tool's _meta names to the
// front's; every other byte of def is kept.
func (b *Mirror) withAppURIs(def json.RawMessage) json.RawMessage {
	meta, err := jsonrpc.Lookup(def, "_meta")
	if err != nil || len(meta) == 0 || meta[0] != '{' {
		return def
	}
	changed := false
	if ui, err := jsonrpc.Lookup(meta, "ui"); err == nil && len(ui) > 0 {
		if uri, ok := jsonrpc.LookupString(ui, "resourceUri"); ok && strings.HasPrefix(uri, appScheme) {
			if ui, err = jsonrpc.WithStringMember(ui, "resourceUri", b.frontAppURI(uri)); err == nil {
				meta, _ = jsonrpc.WithMember(meta, "ui", ui)
				changed = true
			}
		}
	}
	if uri, ok := jsonrpc.LookupString(meta, "ui/resourceUri"); ok && strings.HasPrefix(uri, appScheme) {
		if m, err := jsonrpc.WithStringMember(meta, "ui/resourceUri", b.frontAppURI(uri)); err == nil {
			meta, changed = m, true
		}
	}
	if !changed {
		return def
	}
	if out, err := jsonrpc.WithMember(def, "_meta", meta); err == nil {
		return out
	}
	return def
}

// readResource forwards resources/read. A ui:// URI goes up as the
// backend's own, and the contents of it come back under the front's.
func (b *Mirror) readResource(ctx context.Context, r *mcp.Request, uri string, _ map[string]string) (json.RawMessage, error) {
	own, ok := b.backendAppURI(uri)
	if !ok || own == uri {
		return b.forward(ctx, r, "resources/read", r.Params, nil)
	}
	params, err := jsonrpc.WithStringMember(r.Params, "uri", own)
	if err != nil {
		return nil, err
	}
	res, err := b.forward(ctx, r, "resources/read", params, nil)
	if err != nil {
		return res, err
	}
	return contentsUnder(res, own, uri), nil
}

// contentsUnder is res with each content of uri own given the URI front;
// res as it came when there is none.
func contentsUnder(res json.RawMessage, own, front string) json.RawMessage {
	contents, err := jsonrpc.Lookup(res, "contents")
	if err != nil {
		return res
	}
	out, ok := jsonrpc.RewriteArray(contents, func(it json.RawMessage) (json.RawMessage, bool) {
		if u, ok := jsonrpc.LookupString(it, "uri"); ok && u == own {
			if re, err := jsonrpc.WithStringMember(it, "uri", front); err == nil {
				return re, true
			}
		}
		return it, true
	})
	if !ok {
		return res
	}
	if re, err := jsonrpc.WithMember(res, "contents", out); err == nil {
		return re
	}
	return res
}
