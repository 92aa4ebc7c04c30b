// template.go matches URIs against RFC 6570 level-1 templates: each {var}
// stands for one path segment, percent-decoded, and a template may hold
// several of them ("test://template/{id}/data", "db://{schema}/{table}").

package mcp

import (
	"fmt"
	"net/url"
	"strings"
)

// uriTemplate is a parsed template: literal text and variables, alternating.
type uriTemplate struct {
	parts []templatePart
}

type templatePart struct {
	literal string // set for literal text
	name    string // set for a variable
}

func parseURITemplate(t string) (*uriTemplate, error) {
	var ut uriTemplate
	for t != "" {
		open := strings.IndexByte(t, '{')
		if open < 0 {
			if strings.IndexByte(t, '}') >= 0 {
				return nil, fmt.Errorf("unbalanced '}' in URI template")
			}
			ut.parts = append(ut.parts, templatePart{literal: t})
			break
		}
		if open > 0 {
			lit := t[:open]
			if strings.IndexByte(lit, '}') >= 0 {
				return nil, fmt.Errorf("unbalanced '}' in URI template")
			}
			ut.parts = append(ut.parts, templatePart{literal: lit})
		}
		end := strings.IndexByte(t[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("unclosed '{' in URI template")
		}
		name := t[open+1 : open+end]
		if name == "" || strings.ContainsAny(name, "{+#./;?&=,!@|*:") {
			return nil, fmt.Errorf("URI template variable %q is not level 1", name)
		}
		if n := len(ut.parts); n > 0 && ut.parts[n-1].name != "" {
			return nil, fmt.Errorf("URI template has two adjacent variables")
		}
		ut.parts = append(ut.parts, templatePart{name: name})
		t = t[open+end+1:]
	}
	return &ut, nil
}

// match returns the variables of uri, or ok=false if uri does not fit.
func (ut *uriTemplate) match(uri string) (vars map[string]string, ok bool) {
	rest := uri
	for i, p := range ut.parts {
		if p.name == "" {
			if !strings.HasPrefix(rest, p.literal) {
				return nil, false
			}
			rest = rest[len(p.literal):]
			continue
		}
		// A variable runs to the next '/', or to the next literal when that
		// literal does not start a new segment.
		end := strings.IndexByte(rest, '/')
		if end < 0 {
			end = len(rest)
		}
		if i+1 < len(ut.parts) {
			next := ut.parts[i+1].literal
			if k := strings.Index(rest[:end], next); k >= 0 && next != "" && next[0] != '/' {
				end = k
			}
		}
		if end == 0 {
			return nil, false
		}
		v, err := url.PathUnescape(rest[:end])
		if err != nil {
			return nil, false
		}
		if vars == nil {
			vars = map[string]string{}
		}
		vars[p.name] = v
		rest = rest[end:]
	}
	return vars, rest == ""
}
