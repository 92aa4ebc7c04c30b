// client_mrtr.go is the client's half of a multi round-trip request
// (SEP-2322): what an InputRequiredResult asks, and the params of the
// retry that answers it. A relay whose own caller cannot take such a
// result — the gateway's 2025-era callers, the proxy's wire — asks the
// questions its own way, then retries with these.

package mcp

import (
	"encoding/json"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// IsInputRequired reports whether res is an InputRequiredResult.
func IsInputRequired(res json.RawMessage) bool {
	return jsonrpc.LookupIs(res, "resultType", "input_required")
}

// InputsOf is what the InputRequiredResult res asks, in the server's
// order, each Input's Params its raw JSON.
func InputsOf(res json.RawMessage) []Input {
	reqs, _ := jsonrpc.Lookup(res, "inputRequests")
	var inputs []Input
	_ = jsonrpc.Members(reqs, func(key string, v json.RawMessage) bool {
		m, _ := jsonrpc.LookupString(v, "method")
		p, _ := jsonrpc.Lookup(v, "params")
		inputs = append(inputs, Input{Key: key, Method: m, Params: p})
		return true
	})
	return inputs
}

// InputCapability is the client capability an input's method needs
// ("" for a method that is not one a server may ask for).
func InputCapability(method string) string { return inputCapability[method] }

// RetryParams are the params of the retry of a request whose params were
// params and whose answer was res: answers, one per input in order, in
// inputResponses under the inputs' keys, and res's requestState as it
// came. Every other byte of params is kept.
func RetryParams(params, res json.RawMessage, inputs []Input, answers []json.RawMessage) (json.RawMessage, error) {
	responses := []byte{'{'}
	for i, in := range inputs {
		if i > 0 {
			responses = append(responses, ',')
		}
		responses = jsonrpc.AppendString(responses, in.Key)
		responses = append(responses, ':')
		responses = append(responses, answers[i]...)
	}
	responses = append(responses, '}')
	params, err := jsonrpc.SetMember(params, "inputResponses", responses)
	if err != nil {
		return nil, err
	}
	if state, err := jsonrpc.Lookup(res, "requestState"); err == nil && len(state) > 0 {
		return jsonrpc.SetMember(params, "requestState", state)
	}
	return params, nil
}
