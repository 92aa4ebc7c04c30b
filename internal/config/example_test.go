package config_test

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/upstream"
)

// The reference the README points to loads and validates, and shows every
// kind of backend: it cannot rot unnoticed. (The example that starts as it
// is, examples/mcpgate.yaml, is started by cmd/mcpgate's tests.)
func TestReferenceExampleIsValid(t *testing.T) {
	cfg, err := config.Load("../../examples/reference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[upstream.Kind]bool{}
	for _, b := range cfg.Backends {
		kinds[b.Kind] = true
	}
	for _, k := range []upstream.Kind{upstream.KindStdio, upstream.KindHTTP, upstream.KindSSE, upstream.KindProxy, upstream.KindProcess} {
		if !kinds[k] {
			t.Errorf("the reference has no backend of kind %s", k)
		}
	}
}
