// secrets.go is how secret values are handled where they could leak. They
// become a stdio server's environment only after their names are checked;
// an error quotes the name, never the value. A program's refusal of them is
// scrubbed of any value it echoes before it travels on.

package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// secretEnv turns values into NAME=value entries, sorted by name. A name
// that cannot be an environment variable, or a value with a NUL byte, is
// an error naming the secret and quoting nothing of its value.
func secretEnv(values map[string]string) ([]string, error) {
	names := make([]string, 0, len(values))
	for name, value := range values {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return nil, fmt.Errorf("proxy: secret name %q cannot be an environment variable", name)
		}
		if strings.IndexByte(value, 0) >= 0 {
			return nil, fmt.Errorf("proxy: secret %s: the value contains a NUL byte", name)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	env := make([]string, len(names))
	for i, name := range names {
		env[i] = name + "=" + values[name]
	}
	return env, nil
}

// redacted is what replaces a secret value in a program's refusal.
const redacted = "[redacted]"

// redact replaces every secret value in a program's answer with
// [redacted]. A JSON answer is walked token by token, so that a value is
// found however the program escaped it; it is rewritten only if a value
// was found. Any other text is searched for the value as is and as JSON
// would escape it.
func redact(body []byte, values map[string]string) []byte {
	if json.Valid(body) {
		if out, changed := redactJSON(body, values); changed {
			return out
		}
		return body
	}
	for _, v := range values {
		if v == "" {
			continue
		}
		for _, form := range jsonForms(v) {
			body = bytes.ReplaceAll(body, []byte(form), []byte(redacted))
		}
	}
	return body
}

// redactJSON re-writes a JSON document with every string (and number)
// that contains a value redacted, keeping member order and number text.
func redactJSON(body []byte, values map[string]string) (out []byte, changed bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	type container struct {
		object bool
		n      int
	}
	var stack []container
	for {
		tok, err := dec.Token()
		if err != nil {
			return out, changed // io.EOF: the document is valid
		}
		closing := tok == json.Delim('}') || tok == json.Delim(']')
		if len(stack) > 0 && !closing {
			top := &stack[len(stack)-1]
			switch {
			case top.n > 0 && top.object && top.n%2 == 1:
				out = append(out, ':')
			case top.n > 0:
				out = append(out, ',')
			}
			top.n++
		}
		switch v := tok.(type) {
		case json.Delim:
			out = append(out, byte(v))
			if closing {
				stack = stack[:len(stack)-1]
			} else {
				stack = append(stack, container{object: v == '{'})
			}
		case string:
			r := redactString(v, values)
			changed = changed || r != v
			out = appendJSONString(out, r)
		case json.Number:
			if r := redactString(v.String(), values); r != v.String() {
				changed = true
				out = appendJSONString(out, r)
			} else {
				out = append(out, v...)
			}
		case bool:
			out = strconv.AppendBool(out, v)
		case nil:
			out = append(out, "null"...)
		}
	}
}

func redactString(s string, values map[string]string) string {
	for _, v := range values {
		if v != "" {
			s = strings.ReplaceAll(s, v, redacted)
		}
	}
	return s
}

// jsonForms are the ways v may appear in text: as is, and inside a JSON
// string with and without HTML escaping.
func jsonForms(v string) []string {
	forms := []string{v}
	for _, html := range []bool{true, false} {
		q := string(appendJSONStringHTML(nil, v, html))
		if inner := q[1 : len(q)-1]; !slices.Contains(forms, inner) {
			forms = append(forms, inner)
		}
	}
	return forms
}
