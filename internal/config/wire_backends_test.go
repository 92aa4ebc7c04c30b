package config

import (
	"errors"
	"strings"
	"testing"
)

// The wire's backends are checked like the others: every refusal names
// its key, and a secret's value is never accepted in clear.
func TestWireBackendErrorsNameTheKey(t *testing.T) {
	tests := []struct {
		name, yaml, key string
	}{
		{"proxy without url", "backends: [{name: a, kind: proxy}]", "backends[0].url"},
		{"proxy url not ws", "backends: [{name: a, kind: proxy, url: \"http://h:1\"}]", "backends[0].url"},
		{"proxy with a command", "backends: [{name: a, kind: proxy, url: \"ws://h:1\", command: [x]}]", "backends[0].command"},
		{"proxy with proxy_command", "backends: [{name: a, kind: proxy, url: \"ws://h:1\", proxy_command: [x]}]", "backends[0].proxy_command"},
		{"secrets in clear", "backends: [{name: a, kind: proxy, url: \"ws://h:1\", secrets: {TOKEN: hunter2}}]", "backends[0].secrets"},
		{"secrets_from naming nothing", "backends: [{name: a, kind: proxy, url: \"ws://h:1\", secrets_from: {TOKEN: ''}}]", "backends[0].secrets_from.TOKEN"},
		{"secret_files naming nothing", "backends: [{name: a, kind: proxy, url: \"ws://h:1\", secret_files: {TOKEN: ''}}]", "backends[0].secret_files.TOKEN"},
		{"secret in both", "backends: [{name: a, kind: proxy, url: \"ws://h:1\", secrets_from: {T: A}, secret_files: {T: /f}}]", "backends[0].secret_files.T"},
		{"process without command", "backends: [{name: a, kind: process}]", "backends[0].command"},
		{"process with a url", "backends: [{name: a, kind: process, command: [x], url: \"ws://h:1\"}]", "backends[0].url"},
		{"process env_from naming nothing", "backends: [{name: a, kind: process, command: [x], env_from: {TOKEN: ''}}]", "backends[0].env_from.TOKEN"},
		{"process env_from bad variable", "backends: [{name: a, kind: process, command: [x], env_from: {'A=B': C}}]", "backends[0].env_from"},
		{"process env_files naming nothing", "backends: [{name: a, kind: stdio, command: [x], env_files: {TOKEN: ''}}]", "backends[0].env_files.TOKEN"},
		{"variable in env_from and env_files", "backends: [{name: a, kind: process, command: [x], env_from: {T: A}, env_files: {T: /f}}]", "backends[0].env_files.T"},
		{"process with headers_from", "backends: [{name: a, kind: process, command: [x], headers_from: {A: B}}]", "backends[0].headers_from"},
		{"arguments on stdio", "backends: [{name: a, kind: stdio, command: [x], arguments: {a: 1}}]", "backends[0].arguments"},
		{"secrets_from on http", "backends: [{name: a, kind: http, url: \"http://h/mcp\", secrets_from: {A: B}}]", "backends[0].secrets_from"},
		{"keepalive on http", "backends: [{name: a, kind: http, url: \"http://h/mcp\", keepalive: 10s}]", "backends[0].keepalive"},
		{"keepalive_timeout on stdio", "backends: [{name: a, kind: stdio, command: [x], keepalive_timeout: 10s}]", "backends[0].keepalive_timeout"},
		{"keepalive not a duration", "backends: [{name: a, kind: proxy, url: \"ws://h:1\", keepalive: soon}]", "backends[0].keepalive"},
		{"keepalive negative", "backends: [{name: a, kind: proxy, url: \"ws://h:1\", keepalive: -1s}]", "backends[0].keepalive"},
		{"postgres on http", "backends: [{name: a, kind: http, url: \"http://h/mcp\", postgres: \"db:5432\"}]", "backends[0].postgres"},
		{"postgres without a port", "backends: [{name: a, kind: proxy, url: \"ws://h:1\", postgres: db}]", "backends[0].postgres"},
		{"postgres URL with credentials", "backends: [{name: a, kind: proxy, url: \"ws://h:1\", postgres: \"postgres://u:hunter2@db/x\"}]", "backends[0].postgres"},
		{"postgres URL of another scheme", "backends: [{name: a, kind: proxy, url: \"ws://h:1\", postgres: \"mysql://db:3306\"}]", "backends[0].postgres"},
		{"postgres and postgres_from", "backends: [{name: a, kind: proxy, url: \"ws://h:1\", postgres: \"db:1\", postgres_from: DB}]", "backends[0].postgres"},
		{"postgres_from and postgres_file", "backends: [{name: a, kind: proxy, url: \"ws://h:1\", postgres_file: /f, postgres_from: DB}]", "backends[0].postgres"},
		{"postgres_file on http", "backends: [{name: a, kind: http, url: \"http://h/mcp\", postgres_file: /f}]", "backends[0].postgres_file"},
		{"postgres_from on sse", "backends: [{name: a, kind: sse, url: \"http://h/sse\", postgres_from: DB}]", "backends[0].postgres_from"},
		{"daemon on stdio", "backends: [{name: a, kind: stdio, command: [x], daemon: \"ws://d:1\"}]", "backends[0].daemon"},
		{"daemon not ws", "backends: [{name: a, kind: process, command: [x], daemon: \"http://d:1\"}]", "backends[0].daemon"},
		{"keepalive_timeout of nothing", "backends: [{name: a, kind: process, command: [x], keepalive_timeout: 0s}]", "backends[0].keepalive_timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			if err == nil {
				t.Fatal("accepted")
			}
			var ke *KeyError
			if !errors.As(err, &ke) || ke.Key != tt.key {
				t.Fatalf("error %q: want a KeyError at %s", err, tt.key)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error %q quotes a secret", err)
			}
		})
	}
}

// A proxy backend's arguments are any YAML value, kept for the begin as
// JSON.
func TestWireBackendArgumentsBecomeJSON(t *testing.T) {
	c, err := Parse([]byte("backends:\n  - name: p\n    kind: proxy\n    url: \"ws://127.0.0.1:1\"\n    arguments: {repo: x, depth: 2, tags: [a, b]}\n    secrets_from: {TOKEN: MY_TOKEN}\n"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Backends[0].ArgumentsJSON()
	if err != nil || string(got) != `{"depth":2,"repo":"x","tags":["a","b"]}` {
		t.Fatalf("arguments = %s, %v", got, err)
	}
	if c.Backends[0].SecretsFrom["TOKEN"] != "MY_TOKEN" {
		t.Errorf("secrets_from = %v", c.Backends[0].SecretsFrom)
	}
}

// keepalive and keepalive_timeout are the wire's pings; 0s keepalive
// turns them off.
func TestWireBackendKeepAlive(t *testing.T) {
	c, err := Parse([]byte("backends: [{name: a, kind: proxy, url: \"ws://h:1\", keepalive: 0s, keepalive_timeout: 5s}, {name: b, kind: process, command: [x], keepalive: 45s}]"))
	if err != nil {
		t.Fatal(err)
	}
	if a := c.Backends[0]; a.KeepAlive == nil || a.KeepAlive.Duration != 0 || a.KeepAliveTimeout.Duration.String() != "5s" {
		t.Errorf("a: %+v %+v", a.KeepAlive, a.KeepAliveTimeout)
	}
	if b := c.Backends[1]; b.KeepAlive.Duration.String() != "45s" || b.KeepAliveTimeout != nil {
		t.Errorf("b: %+v %+v", b.KeepAlive, b.KeepAliveTimeout)
	}
}

// postgres names the database (host:port, or a postgres:// URL without
// credentials, port 5432 by default); daemon the ws:// endpoint.
func TestWireBackendPairs(t *testing.T) {
	c, err := Parse([]byte("backends: [{name: a, kind: proxy, url: \"ws://h:1\", postgres: \"db.internal:6543\", daemon: \"wss://svc/ws\"}, " +
		"{name: b, kind: process, command: [x], postgres: \"postgres://db.internal/app?sslmode=disable\"}]"))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"db.internal:6543", "db.internal:5432"} {
		if got, err := c.Backends[i].PostgresAddr(); err != nil || got != want {
			t.Errorf("backend %d: %q %v, want %s", i, got, err, want)
		}
	}
	if c.Backends[0].Daemon != "wss://svc/ws" {
		t.Errorf("daemon %q", c.Backends[0].Daemon)
	}
}

// A database from the environment may be a URL with credentials: they
// are dropped (the gateway never authenticates), and a value that does
// not parse is not quoted in the error.
func TestPostgresAddrFromTheEnvironment(t *testing.T) {
	if got, err := PostgresAddr("postgres://app:hunter2@db.internal:6000/app", true); err != nil || got != "db.internal:6000" {
		t.Errorf("%q %v", got, err)
	}
	if _, err := PostgresAddr("hunter2", true); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a bad value from the environment: %v", err)
	}
}
