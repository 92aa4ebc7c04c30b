package catalogue

import (
	"encoding/json"
	"testing"
)

// A pin made by an earlier mcpgate stays valid: an ordinary definition's
// fingerprint is what it always was. (Twin keys, which earlier versions
// did not fingerprint, change it: TestAChangeHiddenInATwinKeyIsHeld.)
func TestAnOrdinaryDefinitionsFingerprintIsAsItWas(t *testing.T) {
	for _, c := range []struct {
		k        kind
		def, sum string
	}{
		{kindTool, `{"name":"read","description":"Reads a file.","inputSchema":{"type":"object","properties":{"p":{"type":"number","maximum":1e3}}},"_meta":{"ui":{"resourceUri":"ui://fs/a"},"other":1}}`,
			"16e3c12dcf457cf3d55f422b80ebc0485424f1777879e1b10cbbd00b825e257c"},
		{kindPrompt, `{ "arguments": [{"name":"topic","required":true}], "name": "draft", "title": "Draft" }`,
			"5a4d6d3818e1cc7deeeb2e4624c10b6b474eb26aac8bb21d45dbba907c9faf8c"},
	} {
		if got := fingerprint(c.k, json.RawMessage(c.def)); got != c.sum {
			t.Errorf("the fingerprint of %s is %s, was %s (computed by 11f0710's)", c.def, got, c.sum)
		}
	}
}
