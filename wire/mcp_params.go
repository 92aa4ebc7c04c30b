// mcp_params.go checks the params of the four MCP exchanges against the
// shapes MCP gives them, without decoding them into structs. A relay must
// refuse params its upstream could not read (-32602, or a bare channel
// finish). It must still forward the ones it accepts byte for byte.
//
// The checks follow what the seed's parser (serde, over rmcp's types)
// accepts: member names match exactly, unknown members are allowed, and an
// optional member may be null.

package wire

import "errors"

// CheckListParams checks tools/list or resources/list params: null, or an
// object whose "cursor" is a string and whose "_meta" is an object, each
// optional. The error is the parser's message, fit for a -32602 answer.
func CheckListParams(params []byte) error {
	if err := checkJSON(params); err != nil {
		return err
	}
	switch kindOf(params) {
	case 'n':
		return nil
	case '{':
	default:
		return errors.New("params must be an object or null, got " + kindName(kindOf(params)))
	}
	if err := optionalMember(params, "cursor", '"'); err != nil {
		return err
	}
	return optionalMember(params, "_meta", '{')
}

// CheckCallToolParams checks tools/call params (CallToolRequestParams): an
// object with a string "name", and optional object "arguments" and
// "_meta".
func CheckCallToolParams(params []byte) error {
	if err := checkJSON(params); err != nil {
		return err
	}
	if err := requireObject(params, "params"); err != nil {
		return err
	}
	if err := requireString(params, "name"); err != nil {
		return err
	}
	if err := optionalMember(params, "arguments", '{'); err != nil {
		return err
	}
	return optionalMember(params, "_meta", '{')
}

// CheckReadResourceParams checks resources/read params
// (ReadResourceRequestParams): an object with a string "uri" and an
// optional object "_meta".
func CheckReadResourceParams(params []byte) error {
	if err := checkJSON(params); err != nil {
		return err
	}
	if err := requireObject(params, "params"); err != nil {
		return err
	}
	if err := requireString(params, "uri"); err != nil {
		return err
	}
	return optionalMember(params, "_meta", '{')
}
