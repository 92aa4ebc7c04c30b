package jsonrpc_test

import (
	"encoding/json"
	"fmt"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A request parsed once: its method read, its params kept as the bytes
// they came as (the big integer and the unknown member survive), and an
// answer written with the request's own id.
func ExampleParse() {
	m, err := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"n":12345678901234567890},"x-extra":true}}`))
	if err != nil {
		panic(err)
	}
	name, _ := jsonrpc.LookupString(m.Params, "name")
	fmt.Println(m.Method, name)
	fmt.Println(string(m.Params))
	fmt.Println(string(jsonrpc.AppendResult(nil, m.ID, json.RawMessage(`{"content":[]}`))))
	// Output:
	// tools/call add
	// {"name":"add","arguments":{"n":12345678901234567890},"x-extra":true}
	// {"jsonrpc":"2.0","id":7,"result":{"content":[]}}
}

// An error answer carries a code, a message and data of the caller's.
func ExampleAppendError() {
	e := jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: name is required", map[string]string{"missing": "name"})
	fmt.Println(string(jsonrpc.AppendError(nil, jsonrpc.ID(`"a1"`), e)))
	// Output:
	// {"jsonrpc":"2.0","id":"a1","error":{"code":-32602,"message":"invalid params: name is required","data":{"missing":"name"}}}
}
