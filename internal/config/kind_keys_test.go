package config

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// keyUse is, for one backend key, a value for it and the kinds that use
// it. needs is what else the key needs where it is used (session keys
// need session: per-client). No kinds: a key that exists only to be
// refused (a value in clear).
type keyUse struct {
	value, needs string
	kinds        []string
}

var everyKind = []string{BackendStdio, BackendHTTP, BackendSSE, BackendProxy, BackendProcess}

// backendKeyUse says, for every key a backend takes, which kinds use it.
var backendKeyUse = map[string]keyUse{
	"command":              {value: "[x]", kinds: []string{BackendStdio, BackendProcess}},
	"env_from":             {value: "{A: B}", kinds: []string{BackendStdio, BackendProcess}},
	"env_files":            {value: "{A: /f}", kinds: []string{BackendStdio, BackendProcess}},
	"url":                  {value: `"ws://h:1"`, kinds: []string{BackendHTTP, BackendSSE, BackendProxy}},
	"headers_from":         {value: "{X-A: B}", kinds: []string{BackendHTTP, BackendSSE}},
	"oauth":                {value: "{client_id: c, client_secret_from: S, issuer: https://as.example}", kinds: []string{BackendHTTP, BackendSSE}},
	"prefix":               {value: "p", kinds: everyKind},
	"min_role":             {value: "editor", kinds: everyKind},
	"min_roles":            {value: `[{name: "x*", role: viewer}]`, kinds: everyKind},
	"short_descriptions":   {value: `[{name: "x*", description: X.}]`, kinds: everyKind},
	"derive_short":         {value: "title", kinds: everyKind},
	"session":              {value: "per-client", kinds: []string{BackendStdio, BackendHTTP, BackendSSE}},
	"session_idle_timeout": {value: "1m", needs: "session: per-client", kinds: []string{BackendStdio, BackendHTTP, BackendSSE}},
	"session_max":          {value: "3", needs: "session: per-client", kinds: []string{BackendStdio, BackendHTTP, BackendSSE}},
	"call_timeout":         {value: "1m", kinds: everyKind},
	"max_message_bytes":    {value: "1024", kinds: everyKind},
	"validate_arguments":   {value: "true", kinds: everyKind},
	"era":                  {value: "session", kinds: []string{BackendStdio, BackendHTTP, BackendSSE, BackendProcess}},
	"env":                  {value: "{A: b}"},
	"headers":              {value: "{X-A: b}"},
	"secrets":              {value: "{A: b}"},
	"arguments":            {value: "{a: 1}", kinds: []string{BackendProxy}},
	"token_from":           {value: "T", kinds: []string{BackendProxy}},
	"tls":                  {value: "{ca_file: /ca}", kinds: []string{BackendProxy}},
	"token_file":           {value: "/t", kinds: []string{BackendProxy}},
	"secrets_from":         {value: "{A: B}", kinds: []string{BackendProxy}},
	"secret_files":         {value: "{A: /f}", kinds: []string{BackendProxy}},
	"proxy_command":        {value: "[x]", kinds: []string{BackendProcess}},
	"keepalive":            {value: "10s", kinds: []string{BackendProxy, BackendProcess}},
	"keepalive_timeout":    {value: "10s", kinds: []string{BackendProxy, BackendProcess}},
	"postgres":             {value: `"db:5432"`, kinds: []string{BackendProxy, BackendProcess}},
	"postgres_from":        {value: "DB", kinds: []string{BackendProxy, BackendProcess}},
	"postgres_file":        {value: "/f", kinds: []string{BackendProxy, BackendProcess}},
	"daemon":               {value: `"ws://d:1"`, kinds: []string{BackendProxy, BackendProcess}},
}

// kindBase is the least backend of each kind.
var kindBase = map[string]string{
	BackendStdio:   "command: [x]",
	BackendHTTP:    `url: "http://h/mcp"`,
	BackendSSE:     `url: "http://h/sse"`,
	BackendProxy:   `url: "wss://h:1"`,
	BackendProcess: "command: [x]",
}

// A setting that does nothing for a backend's kind is refused when the
// configuration loads, naming it; one its kind uses is taken. Every key a
// backend takes is in the table, so that a new key must say which kinds
// use it.
func TestBackendKeysAreRefusedOnKindsThatDoNotUseThem(t *testing.T) {
	for key := range yamlFields(reflect.TypeFor[BackendConfig]()) {
		if key == "name" || key == "kind" {
			continue
		}
		use, ok := backendKeyUse[key]
		if !ok {
			t.Errorf("backend key %s: say in backendKeyUse which kinds use it", key)
			continue
		}
		for _, kind := range everyKind {
			base := kindBase[kind]
			if strings.HasPrefix(base, key+":") {
				continue // the kind's own required key
			}
			doc := "backends:\n  - name: a\n    kind: " + kind + "\n    " + base + "\n    " + key + ": " + use.value + "\n"
			used := slices.Contains(use.kinds, kind)
			if used && use.needs != "" {
				doc += "    " + use.needs + "\n"
			}
			_, err := Parse([]byte(doc))
			switch {
			case used && err != nil:
				t.Errorf("%s on kind %s is refused: %v", key, kind, err)
			case !used && err == nil:
				t.Errorf("%s on kind %s, which does nothing with it, is accepted", key, kind)
			case !used:
				var ke *KeyError
				if !errors.As(err, &ke) || ke.Key != "backends[0]."+key {
					t.Errorf("%s on kind %s: %v, want the refusal at backends[0].%s", key, kind, err, key)
				}
			}
		}
	}
}
