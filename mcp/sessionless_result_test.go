package mcp

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// ownServerInfoBySetMember is what a relayed result's answer was before it
// was written into the response in one pass: _meta's serverInfo set, then
// the result's _meta, each by jsonrpc.SetMember.
func ownServerInfoBySetMember(info, result json.RawMessage) json.RawMessage {
	meta, _ := jsonrpc.Lookup(result, "_meta")
	if len(meta) > 0 && meta[0] != '{' {
		return result
	}
	if cur, _ := jsonrpc.Lookup(meta, MetaServerInfo); bytes.Equal(cur, info) {
		return result
	}
	meta, err := jsonrpc.SetMember(meta, MetaServerInfo, info)
	if err != nil {
		return result
	}
	if out, err := jsonrpc.SetMember(result, "_meta", meta); err == nil {
		return out
	}
	return result
}

// A relayed result of the revision is answered with this server's
// identity in its _meta, byte for byte as two SetMembers wrote it.
func TestARelayedResultGetsThisServersIdentityAsSetMemberWroteIt(t *testing.T) {
	for _, result := range []string{
		`{"resultType":"complete","content":[]}`,
		`{"resultType":"complete"}`,
		`{ "resultType":"complete" , "x":1 }`,
		`{"resultType":"complete","_meta":{}}`,
		`{"resultType":"complete","_meta":{ }}`,
		`{"resultType":"complete","_meta":{"a":1}}`,
		`{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"backend","version":"1"},"a":1}}`,
		`{"_meta":{"a":{"b":[1,2]}, "io.modelcontextprotocol/serverInfo" : {"name":"x"} },"resultType":"input_required"}`,
		`{"resultType":"complete","_meta":null}`,
		`{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpgate","version":"test"}}}`,
	} {
		checkOwnServerInfo(t, result)
	}
}

func FuzzOwnServerInfoWritesWhatSetMemberWrote(f *testing.F) {
	f.Add(`{"resultType":"complete","_meta":{"a":1}}`)
	f.Add(`{"_meta":{"io.modelcontextprotocol/serverInfo":1},"resultType":"complete"}`)
	f.Add(`{"resultType":"complete"}`)
	f.Fuzz(func(t *testing.T, result string) {
		if !jsonrpc.Valid([]byte(result)) || len(bytes.TrimSpace([]byte(result))) == 0 || bytes.TrimSpace([]byte(result))[0] != '{' {
			return
		}
		checkOwnServerInfo(t, string(bytes.TrimSpace([]byte(result))))
	})
}

func checkOwnServerInfo(t *testing.T, result string) {
	t.Helper()
	s := NewServer(Options{Info: Implementation{Name: "mcpgate", Version: "test"}})
	want := ownServerInfoBySetMember(s.infoJSON, json.RawMessage(result))
	head, rest := s.ownServerInfo([]byte("head:"), json.RawMessage(result))
	got := append(head, rest...)
	if string(got) != "head:"+string(want) {
		t.Errorf("%s\n got %s\nwant %s", result, got[len("head:"):], want)
	}
}
