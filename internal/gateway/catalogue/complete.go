// complete.go routes completion/complete by its ref: a ref/prompt to the
// backend that registered the prompt (its own name put back), a
// ref/resource to the backend that registered that URI template (or
// resource). The ledger already knows every key's owner, so the router is
// the Claims of the front server; pass Claims.Complete as the front's
// mcp.Options.Complete.

package catalogue

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// setLive records b as the connected Backend of its name.
func (c *Claims) setLive(b *Mirror) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.live[b.name] = b
}

// setFront records the front server the ledger's keys belong to.
func (c *Claims) setFront(s *mcp.Server) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.front = s
}

// clearLive forgets b, unless another Backend of its name took over.
func (c *Claims) clearLive(b *Mirror) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live[b.name] == b {
		delete(c.live, b.name)
	}
}

// Complete serves completion/complete at the front by forwarding it to the
// backend owning params.ref; the backend's answer or error is returned as
// it sent it.
func (c *Claims) Complete(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
	ref, _ := jsonrpc.Lookup(r.Params, "ref")
	typ, _ := jsonrpc.LookupString(ref, "type")
	var kinds []kind
	member := ""
	switch typ {
	case "ref/prompt":
		kinds, member = []kind{kindPrompt}, "name"
	case "ref/resource":
		kinds, member = []kind{kindTemplate, kindResource}, "uri"
	default:
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: ref.type must be ref/prompt or ref/resource", nil)
	}
	key, ok := jsonrpc.LookupString(ref, member)
	if !ok {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: ref."+member+" is required and must be a string", nil)
	}
	var b *Mirror
	c.mu.Lock()
	for _, k := range kinds {
		if owner, held := c.owners[k][key]; held {
			b = c.live[owner]
			break
		}
	}
	c.mu.Unlock()
	if b == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: unknown ref", map[string]string{member: key})
	}
	params := r.Params
	if typ == "ref/prompt" && b.prefix != "" {
		newRef, err := jsonrpc.WithStringMember(ref, "name", strings.TrimPrefix(key, b.prefix))
		if err == nil {
			params, err = jsonrpc.WithMember(r.Params, "ref", newRef)
		}
		if err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: bad ref", nil)
		}
	}
	return b.forward(ctx, r, "completion/complete", params, nil)
}
