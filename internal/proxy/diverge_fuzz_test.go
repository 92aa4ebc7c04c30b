// diverge_fuzz_test.go feeds ParseInfo hostile DIVERGE.md files: the image
// is the tool author's, and its front matter is YAML the proxy parses
// before anything else runs. Whatever the input, ParseInfo returns (never
// panics), an accepted file gives a document that is valid JSON with the
// readme in it, and a refusal is an *InfoError.

package proxy

import (
	"encoding/json"
	"errors"
	"testing"
)

func FuzzParseInfo(f *testing.F) {
	for _, seed := range []string{
		"",
		"# Tool\nno front matter\n",
		"---\nsecrets: [API_KEY, DB_URL]\narguments: {type: object}\n---\n# Readme\n",
		"\uFEFF---\nname: x\n---\n",
		"---\nreadme: taken\n---\n",
		"---\narguments: 5\n---\n",
		"---\nsecrets: {a: 1}\n---\n",
		"---\na: &x [*x]\n---\n",
		"---\nunclosed\n",
		"---\n" + "a: [" + "[" + "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[" + "\n---\n",
		"---\n!!binary aGk=\n---\n",
		"\xff\xfe",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := ParseInfo(b)
		if err != nil {
			var ie *InfoError
			if !errors.As(err, &ie) {
				t.Fatalf("ParseInfo refused with %T %v, want an *InfoError", err, err)
			}
			return
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(info.Doc, &doc); err != nil {
			t.Fatalf("accepted file gives a document that is not a JSON object: %v\n%s", err, info.Doc)
		}
		if _, ok := doc["readme"]; !ok {
			t.Fatalf("document without its readme: %s", info.Doc)
		}
		if info.ArgumentsSchema != nil && !json.Valid(info.ArgumentsSchema) {
			t.Fatalf("arguments schema is not JSON: %q", info.ArgumentsSchema)
		}
	})
}
