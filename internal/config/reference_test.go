// reference_test.go keeps docs/configuration.md, the reference of every
// configuration key, generated from the typed configuration itself: the
// keys and their types by reflection, what each does from the field's
// doc comment in this package's source, the defaults from what Parse
// gives for an empty file. The test fails when the file differs from what
// the code says; MCPGATE_UPDATE_DOCS=1 writes it anew.

package config

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const referencePath = "../../docs/configuration.md"

// fieldDocs maps "Type.Field" to the field's doc comment (or its line
// comment), from the package's non-test sources.
func fieldDocs(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	files, _ := filepath.Glob("*.go")
	docs := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			prev, prevEnd := "", 0
			for _, field := range st.Fields.List {
				text := field.Doc.Text()
				if text == "" {
					text = field.Comment.Text()
				}
				// A field right below another with no comment of its own
				// shares that one ("KeepAlive is …, KeepAliveTimeout …").
				if text == "" && fset.Position(field.Pos()).Line == prevEnd+1 {
					text = prev
				}
				prev, prevEnd = text, fset.Position(field.End()).Line
				for _, name := range field.Names {
					docs[ts.Name.Name+"."+name.Name] = strings.Join(strings.Fields(text), " ")
				}
			}
			return true
		})
	}
	return docs
}

type refRow struct{ key, typ, def, doc string }

func describeType(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[Duration]():
		return "duration"
	case t.Kind() == reflect.Pointer:
		return describeType(t.Elem())
	case t.Kind() == reflect.Slice:
		return "list of " + describeType(t.Elem())
	case t.Kind() == reflect.Map:
		return "map of " + describeType(t.Elem())
	case t.Kind() == reflect.Struct:
		return "mapping"
	case t.Kind() == reflect.Float64:
		return "number"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "integer"
	}
	return t.Kind().String()
}

func defaultOf(v reflect.Value) string {
	if !v.IsValid() || v.IsZero() {
		return ""
	}
	switch x := v.Interface().(type) {
	case Duration:
		return x.Duration.String()
	case time.Duration:
		return x.String()
	}
	switch v.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int64, reflect.Float64:
		return fmt.Sprint(v.Interface())
	case reflect.Pointer:
		return defaultOf(v.Elem())
	}
	return ""
}

// walkReference adds t's keys under prefix; v holds the defaults (invalid
// inside lists and maps, where there are none).
func walkReference(t reflect.Type, v reflect.Value, prefix string, docs map[string]string, rows *[]refRow) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
		if v.IsValid() {
			if v.IsNil() {
				v = reflect.Value{}
			} else {
				v = v.Elem()
			}
		}
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		var fv reflect.Value
		if v.IsValid() {
			fv = v.Field(i)
		}
		if strings.Contains(opts, "inline") {
			walkReference(f.Type, fv, prefix, docs, rows)
			continue
		}
		key := prefix + name
		def := ""
		if fv.IsValid() {
			def = defaultOf(fv)
		}
		doc := docs[t.Name()+"."+f.Name]
		// "Listen is the address" reads "`listen` is the address": the
		// reader knows the key, not the Go field.
		if rest, ok := strings.CutPrefix(doc, f.Name+" "); ok {
			doc = "`" + name + "` " + rest
		}
		*rows = append(*rows, refRow{key: key, typ: describeType(f.Type), def: def, doc: doc})
		inner := f.Type
		for inner.Kind() == reflect.Pointer {
			inner = inner.Elem()
		}
		switch {
		case inner == reflect.TypeFor[Duration]():
		case inner.Kind() == reflect.Struct:
			walkReference(f.Type, fv, key+".", docs, rows)
		case inner.Kind() == reflect.Slice && inner.Elem().Kind() == reflect.Struct:
			walkReference(inner.Elem(), reflect.Value{}, key+"[].", docs, rows)
		case inner.Kind() == reflect.Map && inner.Elem().Kind() == reflect.Struct:
			walkReference(inner.Elem(), reflect.Value{}, key+".NAME.", docs, rows)
		}
	}
}

func renderReference(t *testing.T) string {
	t.Helper()
	defaults, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	var rows []refRow
	walkReference(reflect.TypeFor[Config](), reflect.ValueOf(defaults).Elem(), "", fieldDocs(t), &rows)
	var b strings.Builder
	b.WriteString("# Configuration reference\n\n")
	b.WriteString("Every key `mcpgate serve --config FILE` reads, generated from the typed configuration\n")
	b.WriteString("(package `config`: keys and types by reflection, descriptions from the fields' doc\n")
	b.WriteString("comments, defaults from an empty file); `go test ./internal/config` fails when this file is\n")
	b.WriteString("out of date, and `MCPGATE_UPDATE_DOCS=1 go test ./internal/config -run TestConfigurationReference`\n")
	b.WriteString("writes it anew. `[]` marks the items of a list, `NAME` the keys of a map. Defaults that\n")
	b.WriteString("depend on the machine (the store's path) are shown as this machine's.\n\n")
	b.WriteString("| key | type | default | what it does |\n|---|---|---|---|\n")
	home, _ := os.UserHomeDir()
	for _, r := range rows {
		def := r.def
		if home != "" {
			def = strings.ReplaceAll(def, home, "~")
		}
		if def != "" {
			def = "`" + def + "`"
		}
		doc := strings.ReplaceAll(r.doc, "|", "\\|")
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", r.key, r.typ, def, doc)
	}
	return b.String()
}

func TestConfigurationReferenceIsCurrent(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "") // the documented default: ~/.local/share
	t.Setenv("HOME", "/home/you") // shown as ~, whoever runs the test
	got := renderReference(t)
	if os.Getenv("MCPGATE_UPDATE_DOCS") != "" {
		if err := os.WriteFile(referencePath, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(referencePath)
	if err != nil || string(want) != got {
		t.Fatalf("%s is out of date (%v): run MCPGATE_UPDATE_DOCS=1 go test ./internal/config -run TestConfigurationReference", referencePath, err)
	}
	// Every key has something said of it.
	for _, line := range strings.Split(got, "\n") {
		if strings.HasPrefix(line, "| `") && strings.HasSuffix(line, "|  |") {
			t.Errorf("a key without a description: %s", line)
		}
	}
}
