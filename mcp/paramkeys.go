// paramkeys.go refuses the params of a request whose meaning depends on how
// the reader matches keys. The gate, the audit and the relay read
// params.name (uri, ref) by exact key, and forward the rest untouched. Some
// backends' decoders match keys without case: Go's encoding/json, and many
// MCP servers written in Go. Such a backend read
// {"name":"public","NAME":"secret"} as the admin-only tool "secret", while
// the gate admitted "public" and the audit recorded it. Whatever the
// backend's decoder, what the gate decided must be what the backend
// receives. Such params are so refused before the gate: two keys of one
// object that fold together, or a key that folds to a key the gateway reads
// without being it. Exact duplicates count too, as readers disagree on
// which one wins. The rule covers every method the engine serves, not only
// the gated calls: the relay routes tasks/* on taskId, and
// {"taskId":"mine","TASKID":"alice's"} reached a backend that answered
// alice's result to a viewer routed by their own task.

package mcp

import (
	"encoding/json"
	"fmt"

	"github.com/mcpgate/mcpgate/internal/textcut"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// readKeys are, for every method the engine serves, the members of params
// that something reads by name: the engine, the gate, the audit or the
// relay. They read them to route (a task's id), to gate (an entry's name
// or URI) or to answer. nested lists the members holding objects whose
// members are read by name too: ref's type, name and uri, and in _meta
// the progress token and the 2026-07-28 request fields. A method served
// with no entry here would let a folded key through;
// TestEveryServedMethodDeclaresTheKeysItReads fails on one.
var readKeys = map[string][]string{
	"initialize":               {"protocolVersion", "capabilities", "clientInfo", "_meta"},
	"ping":                     {"_meta"},
	"logging/setLevel":         {"level", "_meta"},
	"tools/list":               {"cursor", "_meta"},
	"resources/list":           {"cursor", "_meta"},
	"resources/templates/list": {"cursor", "_meta"},
	"prompts/list":             {"cursor", "_meta"},
	"tools/call":               {"name", "arguments", "_meta"},
	"prompts/get":              {"name", "arguments", "_meta"},
	"resources/read":           {"uri", "_meta"},
	"resources/subscribe":      {"uri", "_meta"},
	"resources/unsubscribe":    {"uri", "_meta"},
	"completion/complete":      {"ref", "argument", "context", "_meta"},
	// The tasks extension: the relay routes on taskId (catalogue/tasks.go).
	"tasks/get":    {"taskId", "_meta"},
	"tasks/cancel": {"taskId", "_meta"},
	"tasks/update": {"taskId", "inputResponses", "_meta"},
	// Served by the sessionless front alone (sessionless.go).
	"server/discover":      {"_meta"},
	"subscriptions/listen": {"notifications", "_meta"},
}

// nestedKeys are the keys read inside the members holding objects: ref's
// type, name and uri. In _meta they are the progress token and what a
// 2026-07-28 request says of its client. The relay sets those it sends a
// backend, and a folded twin of one would reach the backend beside it.
var nestedKeys = map[string]struct {
	where string // how the refusal names the object
	keys  []string
}{
	"ref": {"params.ref", []string{"type", "name", "uri"}},
	"_meta": {"params._meta", []string{"progressToken",
		MetaProtocolVersion, MetaClientCapabilities, MetaClientInfo, MetaLogLevel}},
}

// maxReportedKey bounds the key quoted back: it is the caller's.
const maxReportedKey = 128

// checkParamKeys returns the -32602 refusal for a method's params, or nil
// when they mean the same to every reader. Methods the engine does not
// serve (a handler of the embedder's reads what it reads), and params
// that are not an object (answered by the method itself), pass.
func checkParamKeys(method string, params json.RawMessage) error {
	read, ok := readKeys[method]
	if !ok || len(params) == 0 || params[0] != '{' {
		return nil
	}
	return checkObjectKeys(params, "params", read, true)
}

// checkObjectKeys checks one object's members: no two fold together, and
// none folds to one of read without being it. With nested, the members
// named in nestedKeys that hold objects are checked the same way.
func checkObjectKeys(obj json.RawMessage, where string, read []string, nested bool) error {
	// A KeySet: params hold a handful of keys, compared where they lie,
	// but a hostile request's many keys cost linear time, not quadratic.
	var keys jsonrpc.KeySet
	var refusal error
	err := jsonrpc.MemberKeys(obj, func(key []byte, value json.RawMessage) bool {
		if prev, found := keys.Add(key); found {
			refusal = ambiguousKey(where, string(key), string(prev))
			return false
		}
		for _, want := range read {
			if string(key) != want && jsonrpc.EqualFold(key, want) {
				refusal = ambiguousKey(where, string(key), want)
				return false
			}
		}
		if inner, ok := nestedKeys[string(key)]; nested && ok && len(value) > 0 && value[0] == '{' {
			if refusal = checkObjectKeys(value, inner.where, inner.keys, false); refusal != nil {
				return false
			}
		}
		return true
	})
	if err != nil {
		return nil // not valid JSON here cannot happen (the envelope parsed); left to the method
	}
	return refusal
}

// ambiguousKey is the refusal naming key, and the key it is taken for.
func ambiguousKey(where, key, other string) error {
	key, other = textcut.Valid(key, maxReportedKey), textcut.Valid(other, maxReportedKey)
	msg := fmt.Sprintf("invalid params: %s has the key %q, which a case-insensitive reader takes for %q", where, key, other)
	if key == other {
		msg = fmt.Sprintf("invalid params: %s has the key %q more than once", where, key)
	}
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams, msg,
		map[string]string{"kind": string(KindAmbiguousKey), "at": where, "key": key, "conflictsWith": other})
}
