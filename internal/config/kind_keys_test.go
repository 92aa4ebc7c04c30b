package config

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/upstream"
)

// keyUse is, for one backend key, a value for it and the kinds that use
// it. needs is what else the key needs where it is used (session keys
// need session: per-client). No kinds: a key that exists only to be
// refused (a value in clear).
type keyUse struct {
	value, needs string
	kinds        []upstream.Kind
	// values overrides value for a kind; top goes before backends:.
	values map[upstream.Kind]string
	top    string
}

var everyKind = []upstream.Kind{upstream.KindStdio, upstream.KindHTTP, upstream.KindSSE, upstream.KindProxy, upstream.KindProcess}

// backendKeyUse says, for every key a backend takes, which kinds use it.
var backendKeyUse = map[string]keyUse{
	"command":              {value: "[x]", kinds: []upstream.Kind{upstream.KindStdio, upstream.KindProcess}},
	"env_from":             {value: "{A: B}", kinds: []upstream.Kind{upstream.KindStdio, upstream.KindProcess}},
	"env_files":            {value: "{A: /f}", kinds: []upstream.Kind{upstream.KindStdio, upstream.KindProcess}},
	"url":                  {value: `"ws://h:1"`, kinds: []upstream.Kind{upstream.KindHTTP, upstream.KindSSE, upstream.KindProxy}},
	"headers_from":         {value: "{X-A: B}", kinds: []upstream.Kind{upstream.KindHTTP, upstream.KindSSE}},
	"oauth":                {value: "{client_id: c, client_secret_from: S, issuer: https://as.example}", kinds: []upstream.Kind{upstream.KindHTTP, upstream.KindSSE}},
	"prefix":               {value: "p", kinds: everyKind},
	"min_role":             {value: "editor", kinds: everyKind},
	"min_roles":            {value: `[{name: "x*", role: viewer}]`, kinds: everyKind},
	"short_descriptions":   {value: `[{name: "x*", description: X.}]`, kinds: everyKind},
	"derive_short":         {value: "title", kinds: everyKind},
	"tools":                {value: `[{name: "x*", hide: true}]`, kinds: everyKind},
	"prompts":              {value: `[{name: p, rename: q}]`, kinds: everyKind},
	"session":              {value: "per-client", kinds: []upstream.Kind{upstream.KindStdio, upstream.KindHTTP, upstream.KindSSE}},
	"session_idle_timeout": {value: "1m", needs: "session: per-client", kinds: []upstream.Kind{upstream.KindStdio, upstream.KindHTTP, upstream.KindSSE}},
	"session_max":          {value: "3", needs: "session: per-client", kinds: []upstream.Kind{upstream.KindStdio, upstream.KindHTTP, upstream.KindSSE}},
	"call_timeout":         {value: "1m", kinds: everyKind},
	"max_message_bytes":    {value: "1024", kinds: everyKind},
	"validate_arguments":   {value: "true", kinds: everyKind},
	"identity":             {value: "shared", kinds: everyKind},
	"credential": {value: "{vault: {env: KEY}}", needs: "identity: per_user", top: "vault: {key_from: MCPGATE_TEST_VAULT_KEY}\n",
		values: map[upstream.Kind]string{upstream.KindHTTP: "{vault: {header: X-Key}}", upstream.KindSSE: "{vault: {header: X-Key}}"},
		kinds:  []upstream.Kind{upstream.KindStdio, upstream.KindHTTP, upstream.KindSSE, upstream.KindProcess}},
	"era":               {value: "session", kinds: []upstream.Kind{upstream.KindStdio, upstream.KindHTTP, upstream.KindSSE, upstream.KindProcess}},
	"env":               {value: "{A: b}"},
	"headers":           {value: "{X-A: b}"},
	"secrets":           {value: "{A: b}"},
	"arguments":         {value: "{a: 1}", kinds: []upstream.Kind{upstream.KindProxy}},
	"token_from":        {value: "T", kinds: []upstream.Kind{upstream.KindProxy}},
	"tls":               {value: "{ca_file: /ca}", kinds: []upstream.Kind{upstream.KindProxy}},
	"token_file":        {value: "/t", kinds: []upstream.Kind{upstream.KindProxy}},
	"secrets_from":      {value: "{A: B}", kinds: []upstream.Kind{upstream.KindProxy}},
	"secret_files":      {value: "{A: /f}", kinds: []upstream.Kind{upstream.KindProxy}},
	"proxy_command":     {value: "[x]", kinds: []upstream.Kind{upstream.KindProcess}},
	"keepalive":         {value: "10s", kinds: []upstream.Kind{upstream.KindProxy, upstream.KindProcess}},
	"keepalive_timeout": {value: "10s", kinds: []upstream.Kind{upstream.KindProxy, upstream.KindProcess}},
	"postgres":          {value: `"db:5432"`, kinds: []upstream.Kind{upstream.KindProxy, upstream.KindProcess}},
	"postgres_from":     {value: "DB", kinds: []upstream.Kind{upstream.KindProxy, upstream.KindProcess}},
	"postgres_file":     {value: "/f", kinds: []upstream.Kind{upstream.KindProxy, upstream.KindProcess}},
	"daemon":            {value: `"ws://d:1"`, kinds: []upstream.Kind{upstream.KindProxy, upstream.KindProcess}},
}

// kindBase is the least backend of each kind.
var kindBase = map[upstream.Kind]string{
	upstream.KindStdio:   "command: [x]",
	upstream.KindHTTP:    `url: "http://h/mcp"`,
	upstream.KindSSE:     `url: "http://h/sse"`,
	upstream.KindProxy:   `url: "wss://h:1"`,
	upstream.KindProcess: "command: [x]",
}

// A setting that does nothing for a backend's kind is refused when the
// configuration loads, naming it; one its kind uses is taken. Every key a
// backend takes is in the table, so that a new key must say which kinds
// use it.
func TestBackendKeysAreRefusedOnKindsThatDoNotUseThem(t *testing.T) {
	t.Setenv("MCPGATE_TEST_VAULT_KEY", strings.Repeat("ab", 32))
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
			value := use.value
			if v, ok := use.values[kind]; ok {
				value = v
			}
			doc := use.top + "backends:\n  - name: a\n    kind: " + string(kind) + "\n    " + base + "\n    " + key + ": " + value + "\n"
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
