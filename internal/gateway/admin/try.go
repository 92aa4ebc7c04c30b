// try.go is the console's Try page: one tool as callers see it (and as
// its backend defines it, from its pin), and a form made from its input
// schema. The call is made as the signed-in admin through the same gate,
// rate limit and audit as any call. The result is shown as a client
// would see it: text, images drawn, JSON indented, an error with its
// code and data.

package admin

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// field is one input of the form, from one property of the schema.
type field struct {
	Name, Description string
	// Kind is text, number, checkbox, select (an enum), lines (an array
	// of simple values, one a line) or json (anything else, raw).
	Kind     string
	Item     string // lines: the items' JSON type
	Required bool
	Options  []string
	Value    string
}

// tryData is the Try page.
type tryData struct {
	Name       string
	Definition []string // as callers see it, indented
	// Own is the backend's own definition (its pin), when it differs.
	Own    []string
	Origin string // the backend's own name
	Fields []field
	Result *tryResult
}

// tryResult is a call's answer as a client would show it.
type tryResult struct {
	Error             string // the JSON-RPC error: code and message
	ErrorData         []string
	IsError           bool
	Texts             []string
	Images            []template.URL
	Others            [][]string // other content, indented
	StructuredContent []string
}

func (h *Handler) try(w http.ResponseWriter, r *http.Request, c caller) {
	name := r.FormValue("name")
	var def json.RawMessage
	var entry mcp.CatalogueEntry
	for _, e := range h.src.Catalogue(r.Context(), c.id.Role) {
		if e.Kind == mcp.KindTool && e.Name == name {
			def, entry = e.Definition, e
		}
	}
	if def == nil {
		h.render(w, http.StatusNotFound, "try", *(&view{Title: "Try a tool", Nav: "catalogue", Error: "There is no tool " + name + " for your role."}).from(c))
		return
	}
	schema, _ := jsonrpc.Lookup(def, "inputSchema")
	d := tryData{Name: name, Definition: pretty(def), Fields: formFields(schema)}
	if own := h.src.OwnDefinition(r.Context(), entry.Owner, "tool", entry.Origin); own != nil && !slices.Equal(pretty(own), d.Definition) {
		d.Own, d.Origin = pretty(own), entry.Origin
	}
	status := http.StatusOK
	if r.Method == http.MethodPost {
		for i := range d.Fields {
			d.Fields[i].Value = r.PostFormValue("arg." + d.Fields[i].Name)
		}
		args, err := arguments(d.Fields)
		if err != nil {
			d.Result, status = &tryResult{Error: err.Error()}, http.StatusBadRequest
		} else {
			params := append(jsonrpc.AppendString([]byte(`{"name":`), name), `,"arguments":`...)
			res, err := h.src.TryTool(r.Context(), c.id, append(append(params, args...), '}'))
			d.Result = shown(res, err)
			h.log.Info("admin: a tool tried", "tool", name, "by", c.id.Subject)
		}
	}
	v := view{Title: "Try " + name, Nav: "catalogue", Data: d}
	h.render(w, status, "try", *v.from(c))
}

// formFields are the inputs for the properties of schema, in its order.
func formFields(schema json.RawMessage) []field {
	props, _ := jsonrpc.Lookup(schema, "properties")
	var required []string
	if raw, err := jsonrpc.Lookup(schema, "required"); err == nil {
		_ = json.Unmarshal(raw, &required)
	}
	var out []field
	_ = jsonrpc.Members(props, func(name string, p json.RawMessage) bool {
		f := field{Name: name, Kind: "json"}
		f.Description, _ = jsonrpc.LookupString(p, "description")
		for _, r := range required {
			f.Required = f.Required || r == name
		}
		typ, _ := jsonrpc.LookupString(p, "type")
		var enum []any
		if raw, err := jsonrpc.Lookup(p, "enum"); err == nil && json.Unmarshal(raw, &enum) == nil && len(enum) > 0 && typ == "string" {
			f.Kind = "select"
			for _, o := range enum {
				f.Options = append(f.Options, fmt.Sprint(o))
			}
		} else {
			switch typ {
			case "string":
				f.Kind = "text"
			case "number", "integer":
				f.Kind = "number"
			case "boolean":
				f.Kind = "checkbox"
			case "array":
				items, _ := jsonrpc.Lookup(p, "items")
				switch t, _ := jsonrpc.LookupString(items, "type"); t {
				case "string", "number", "integer", "boolean":
					f.Kind, f.Item = "lines", t
				}
			}
		}
		out = append(out, f)
		return true
	})
	return out
}

// arguments is the JSON object the fields' values make; an empty value
// is left out.
func arguments(fields []field) (json.RawMessage, error) {
	out := []byte("{")
	for _, f := range fields {
		v := strings.TrimSpace(f.Value)
		if v == "" {
			continue
		}
		raw, err := value(f, v)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", f.Name, err)
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(jsonrpc.AppendString(out, f.Name), ':'), raw...)
	}
	return append(out, '}'), nil
}

// value is one field's value v as JSON.
func value(f field, v string) ([]byte, error) {
	switch f.Kind {
	case "text", "select":
		return jsonrpc.AppendString(nil, v), nil
	case "number":
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return nil, fmt.Errorf("%q is not a number", v)
		}
		return []byte(v), nil
	case "checkbox":
		return []byte("true"), nil
	case "boolean":
		if v != "true" && v != "false" {
			return nil, fmt.Errorf("%q is not true or false", v)
		}
		return []byte(v), nil
	case "lines":
		kind := map[string]string{"string": "text", "number": "number", "integer": "number", "boolean": "boolean"}[f.Item]
		out := []byte("[")
		for i, line := range strings.Split(v, "\n") {
			if i > 0 {
				out = append(out, ',')
			}
			item, err := value(field{Kind: kind}, strings.TrimSpace(line))
			if err != nil {
				return nil, err
			}
			out = append(out, item...)
		}
		return append(out, ']'), nil
	}
	if !json.Valid([]byte(v)) {
		return nil, errors.New("not JSON")
	}
	return []byte(v), nil
}

// shown is a call's answer as the page shows it.
func shown(res json.RawMessage, err error) *tryResult {
	out := &tryResult{}
	var je *jsonrpc.Error
	switch {
	case errors.As(err, &je):
		out.Error = fmt.Sprintf("%d %s", je.Code, je.Message)
		if len(je.Data) > 0 {
			out.ErrorData = pretty(je.Data)
		}
		return out
	case err != nil:
		out.Error = err.Error()
		return out
	}
	var r struct {
		IsError           bool              `json:"isError"`
		Content           []json.RawMessage `json:"content"`
		StructuredContent json.RawMessage   `json:"structuredContent"`
	}
	_ = json.Unmarshal(res, &r)
	out.IsError = r.IsError
	for _, c := range r.Content {
		var item struct{ Type, Text, Data, MimeType string }
		_ = json.Unmarshal(c, &item)
		switch {
		case item.Type == "text":
			out.Texts = append(out.Texts, mcp.ShowInvisible(item.Text))
		case item.Type == "image" && strings.HasPrefix(item.MimeType, "image/") && !strings.ContainsAny(item.MimeType, ";,\"'") && isBase64(item.Data):
			out.Images = append(out.Images, template.URL("data:"+item.MimeType+";base64,"+item.Data))
		default:
			out.Others = append(out.Others, pretty(c))
		}
	}
	if len(r.StructuredContent) > 0 {
		out.StructuredContent = pretty(r.StructuredContent)
	}
	return out
}

func isBase64(s string) bool {
	_, err := base64.StdEncoding.DecodeString(s)
	return err == nil && s != ""
}

// tryLink is the Try page of tool name.
func tryLink(name string) string { return "/admin/try?name=" + url.QueryEscape(name) }
