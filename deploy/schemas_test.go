// schemas_test.go makes the JSON schemas kubeconform validates against
// from the OpenAPI document of a pinned Kubernetes release (the module
// k8s.io/kubernetes, fetched by the Go module proxy like any dependency;
// nothing is imported from it), as kubeconform's own schemas are made:
// one standalone file per kind, int-or-string and quantities as either
// type, and strict — every object refuses properties it does not define.

package deploy_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// kubernetesRelease is the release the manifests are validated against.
const kubernetesRelease = "v1.34.2"

// swaggerPath fetches the release's module into the module cache (once)
// and returns its OpenAPI v2 document.
func swaggerPath(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", "k8s.io/kubernetes@"+kubernetesRelease)
	cmd.Dir = t.TempDir() // outside our module: its go.mod is left alone
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	var dl struct{ Dir, Error string }
	_ = json.Unmarshal(out, &dl)
	if err != nil || dl.Dir == "" {
		if os.Getenv("MCPGATE_REQUIRE_PEERS") == "" {
			t.Skipf("the Kubernetes %s OpenAPI document cannot be fetched (%v %s)", kubernetesRelease, err, dl.Error)
		}
		t.Fatalf("fetching k8s.io/kubernetes@%s: %v %s", kubernetesRelease, err, dl.Error)
	}
	return filepath.Join(dl.Dir, "api", "openapi-spec", "swagger.json")
}

// writeSchemas writes dir/<kind><suffix>.json for the kinds named
// (as kubeconform's path template {{ .ResourceKind }}{{ .KindSuffix }}.json
// names them: "deployment-apps-v1"), each with the definitions it reaches.
func writeSchemas(t *testing.T, swagger, dir string, want map[string]bool) {
	t.Helper()
	raw, err := os.ReadFile(swagger)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	defs := map[string]any{}
	for name, d := range doc.Definitions {
		defs[name] = fixSchema(d)
	}
	for name, d := range doc.Definitions {
		gvks, _ := d["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			gvk := g.(map[string]any)
			group, _ := gvk["group"].(string)
			suffix := "-" + strings.ToLower(gvk["version"].(string))
			if group != "" {
				suffix = "-" + strings.ToLower(strings.Split(group, ".")[0]) + suffix
			}
			base := strings.ToLower(gvk["kind"].(string)) + suffix
			if !want[base] {
				continue
			}
			delete(want, base)
			reached := map[string]any{}
			reach(defs, name, reached)
			file := filepath.Join(dir, base+".json")
			out, err := json.Marshal(map[string]any{"$ref": "#/definitions/" + name, "definitions": reached})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, out, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// reach adds name's definition and every definition it refers to.
func reach(defs map[string]any, name string, into map[string]any) {
	if _, done := into[name]; done {
		return
	}
	d, ok := defs[name]
	if !ok {
		return
	}
	into[name] = d
	var walk func(any)
	walk = func(v any) {
		switch s := v.(type) {
		case map[string]any:
			if ref, ok := s["$ref"].(string); ok {
				reach(defs, strings.TrimPrefix(ref, "#/definitions/"), into)
			}
			for _, sub := range s {
				walk(sub)
			}
		case []any:
			for _, sub := range s {
				walk(sub)
			}
		}
	}
	walk(d)
}

// fixSchema rewrites one OpenAPI v2 schema as JSON Schema: the two
// Kubernetes formats that take either type, and strictness.
func fixSchema(v any) any {
	switch s := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, sub := range s {
			if k == "properties" {
				props := map[string]any{}
				for name, p := range sub.(map[string]any) {
					props[name] = fixSchema(p)
				}
				out[k] = props
				continue
			}
			out[k] = fixSchema(sub)
		}
		switch out["format"] {
		case "int-or-string":
			delete(out, "type")
			delete(out, "format")
			out["oneOf"] = []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}
		}
		if desc, _ := out["description"].(string); strings.HasPrefix(desc, "Quantity is a fixed-point") {
			delete(out, "type")
			out["oneOf"] = []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}
		}
		if _, has := out["properties"]; has {
			if _, set := out["additionalProperties"]; !set {
				out["additionalProperties"] = false
			}
		}
		return out
	case []any:
		out := make([]any, len(s))
		for i, sub := range s {
			out[i] = fixSchema(sub)
		}
		return out
	}
	return v
}
