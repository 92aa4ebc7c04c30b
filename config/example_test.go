package config_test

import (
	"testing"

	"github.com/mcpgate/mcpgate/config"
)

// The example the README points to loads and validates, and shows every
// kind of backend: it cannot rot unnoticed.
func TestExampleFileIsValid(t *testing.T) {
	cfg, err := config.Load("../examples/mcpgate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, b := range cfg.Backends {
		kinds[b.Kind] = true
	}
	for _, k := range []string{config.BackendStdio, config.BackendHTTP, config.BackendProxy, config.BackendProcess} {
		if !kinds[k] {
			t.Errorf("the example has no backend of kind %s", k)
		}
	}
}
