// resources.go is the resources and resource-template registries,
// resources/read with its gate, and subscriptions to resource updates.

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A ResourceHandler reads one resource. vars holds a template's variables
// (nil for a concrete resource). It returns the raw resources/read result;
// an error wrapping ErrNotFound is answered -32002.
type ResourceHandler func(ctx context.Context, r *Request, uri string, vars map[string]string) (json.RawMessage, error)

// Resource is a concrete resources registry entry.
type Resource struct {
	URI         string
	Name        string
	Title       string
	Description string
	MimeType    string
	Size        int64
	Annotations json.RawMessage
	Meta        json.RawMessage
	MinRole     string
	Owner       string // who serves it (Entry.Owner)
	Read        ResourceHandler
	Definition  json.RawMessage // sent as is in resources/list when set
	Short       string          // the compact view's description ("": the full one)
}

// ResourceTemplate is a parameterised resource (RFC 6570 level 1).
type ResourceTemplate struct {
	URITemplate string
	Name        string
	Title       string
	Description string
	MimeType    string
	Annotations json.RawMessage
	Meta        json.RawMessage
	MinRole     string
	Owner       string // who serves it (Entry.Owner)
	Read        ResourceHandler
	Definition  json.RawMessage
	Short       string // the compact view's description ("": the full one)

	compiled *uriTemplate
}

// AddResources registers concrete resources by URI.
func (s *Server) AddResources(rs ...*Resource) error {
	slots := make([]*slot[*Resource], 0, len(rs))
	for _, r := range rs {
		if r.URI == "" || r.Read == nil {
			return fmt.Errorf("mcp: resource %q needs a URI and a reader", r.URI)
		}
		def := r.Definition
		if def == nil {
			def, _ = json.Marshal(struct {
				URI         string          `json:"uri"`
				Name        string          `json:"name"`
				Title       string          `json:"title,omitempty"`
				Description string          `json:"description,omitempty"`
				MimeType    string          `json:"mimeType,omitempty"`
				Size        int64           `json:"size,omitempty"`
				Annotations json.RawMessage `json:"annotations,omitempty"`
				Meta        json.RawMessage `json:"_meta,omitempty"`
			}{r.URI, r.Name, r.Title, r.Description, r.MimeType, r.Size, r.Annotations, r.Meta})
		}
		slots = append(slots, &slot[*Resource]{value: r, def: def, derived: newDerived(def, r.Short), entry: Entry{Kind: KindResource, Name: r.URI, MinRole: r.MinRole, Owner: r.Owner}})
	}
	s.resources.put(slots...)
	return nil
}

// RemoveResources unregisters resources by URI.
func (s *Server) RemoveResources(uris ...string) { s.resources.remove(uris...) }

// AddResourceTemplates registers templates; one that is not RFC 6570 level
// 1 is an error and nothing is added.
func (s *Server) AddResourceTemplates(ts ...*ResourceTemplate) error {
	slots := make([]*slot[*ResourceTemplate], 0, len(ts))
	for _, t := range ts {
		if t.Read == nil {
			return fmt.Errorf("mcp: resource template %q needs a reader", t.URITemplate)
		}
		ut, err := parseURITemplate(t.URITemplate)
		if err != nil {
			return fmt.Errorf("mcp: resource template %q: %w", t.URITemplate, err)
		}
		t.compiled = ut
		def := t.Definition
		if def == nil {
			def, _ = json.Marshal(struct {
				URITemplate string          `json:"uriTemplate"`
				Name        string          `json:"name"`
				Title       string          `json:"title,omitempty"`
				Description string          `json:"description,omitempty"`
				MimeType    string          `json:"mimeType,omitempty"`
				Annotations json.RawMessage `json:"annotations,omitempty"`
				Meta        json.RawMessage `json:"_meta,omitempty"`
			}{t.URITemplate, t.Name, t.Title, t.Description, t.MimeType, t.Annotations, t.Meta})
		}
		slots = append(slots, &slot[*ResourceTemplate]{value: t, def: def, derived: newDerived(def, t.Short), entry: Entry{Kind: KindResource, Name: t.URITemplate, MinRole: t.MinRole, Owner: t.Owner}})
	}
	s.templates.put(slots...)
	return nil
}

// RemoveResourceTemplates unregisters templates by their template string.
func (s *Server) RemoveResourceTemplates(templates ...string) { s.templates.remove(templates...) }

func (s *Server) serveResourcesList(ctx context.Context, r *Request) (json.RawMessage, error) {
	return s.resources.list(ctx, r.Params, "resources")
}

func (s *Server) serveTemplatesList(ctx context.Context, r *Request) (json.RawMessage, error) {
	return s.templates.list(ctx, r.Params, "resourceTemplates")
}

// serveResourcesRead reads the resource the request resolved to
// (target.go), which the gate has admitted.
func (s *Server) serveResourcesRead(ctx context.Context, r *Request) (json.RawMessage, error) {
	uri := r.target.Name
	res, err := r.target.read(ctx, r, uri, r.target.vars)
	if errors.Is(err, ErrNotFound) {
		return nil, resourceNotFound(uri)
	}
	return res, err
}

// findResource looks the URI up among concrete resources, then templates in
// registration order.
func (s *Server) findResource(uri string) (ResourceHandler, map[string]string, Entry, bool) {
	if res, entry, ok := s.resources.get(uri); ok {
		return res.Read, nil, entry, true
	}
	var read ResourceHandler
	var vars map[string]string
	var entry Entry
	s.templates.each(func(sl *slot[*ResourceTemplate]) bool {
		if v, ok := sl.value.compiled.match(uri); ok {
			read, vars, entry = sl.value.Read, v, sl.entry
			return false
		}
		return true
	})
	return read, vars, entry, read != nil
}

func resourceNotFound(uri string) error {
	return jsonrpc.NewError(jsonrpc.CodeResourceNotFound, "resource not found: "+uri, map[string]string{"uri": uri})
}

func uriParam(params json.RawMessage) (string, error) {
	if len(params) == 0 || params[0] != '{' {
		return "", jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: uri is required", nil)
	}
	uri, ok := jsonrpc.LookupString(params, "uri")
	if !ok || uri == "" {
		return "", jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: uri is required and must be a string", nil)
	}
	return uri, nil
}

// serveSubscribe answers as resources/read would for a URI the caller may
// not read or that no one serves: not found, forbidden, rate limited.
// Before, it answered {} to anyone. That told a caller that a hidden URI
// existed, and let it wait for updates it would never be allowed to read.
func (s *Server) serveSubscribe(_ context.Context, r *Request) (json.RawMessage, error) {
	uri := r.target.Name
	if r.Session == nil {
		return emptyResult, nil // a stateless client has no stream for updates
	}
	r.Session.mu.Lock()
	r.Session.subscribed[uri] = struct{}{}
	r.Session.mu.Unlock()
	return emptyResult, nil
}

func serveUnsubscribe(_ context.Context, r *Request) (json.RawMessage, error) {
	uri, err := uriParam(r.Params)
	if err != nil {
		return nil, err
	}
	if r.Session == nil {
		return emptyResult, nil
	}
	r.Session.mu.Lock()
	delete(r.Session.subscribed, uri)
	r.Session.mu.Unlock()
	return emptyResult, nil
}

// Subscribed reports whether the session subscribed to uri.
func (s *Session) Subscribed(uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.subscribed[uri]
	return ok
}

// ResourceUpdated tells every session subscribed to uri that it changed.
func (s *Server) ResourceUpdated(uri string) {
	params, _ := json.Marshal(map[string]string{"uri": uri})
	s.broadcast("notifications/resources/updated", params, func(ss *Session) bool { return ss.Subscribed(uri) })
}

// ResourceKey names the catalogue entry a resources/read of uri reaches:
// the resource's URI, or the pattern of the first URI template matching
// it. ok is false when no entry serves uri.
func (s *Server) ResourceKey(uri string) (key string, template, ok bool) {
	if _, entry, found := s.resources.get(uri); found {
		return entry.Name, false, true
	}
	s.templates.each(func(sl *slot[*ResourceTemplate]) bool {
		if _, matched := sl.value.compiled.match(uri); matched {
			key, template, ok = sl.entry.Name, true, true
			return false
		}
		return true
	})
	return key, template, ok
}
