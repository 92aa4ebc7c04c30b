package config

import (
	"errors"
	"testing"
)

// auth.oauth is refused, naming the key, wherever it could not work.
func TestOAuthConfigurationErrorsNameTheKey(t *testing.T) {
	const ok = "auth:\n  oauth:\n    resource: https://mcp.example.com/mcp\n    authorization_servers: [{issuer: https://idp.example.com}]\n    scopes: {mcp:read: viewer}\n"
	if _, err := Parse([]byte(ok)); err != nil {
		t.Fatalf("a valid auth.oauth: %v", err)
	}
	if _, err := Parse([]byte("auth: {oauth: {resource: http://127.0.0.1:8080/mcp, builtin: true, access_lifetime: 5m, max_clients: 10}}")); err != nil {
		t.Fatalf("the built-in server alone: %v", err)
	}
	for _, c := range []struct{ name, yaml, key string }{
		{"no resource", "auth: {oauth: {authorization_servers: [{issuer: https://i.example}], scopes: {a: viewer}}}", "auth.oauth.resource"},
		{"an http resource afar", "auth: {oauth: {resource: http://mcp.example.com/mcp, authorization_servers: [{issuer: https://i.example}], scopes: {a: viewer}}}", "auth.oauth.resource"},
		{"a resource with a fragment", "auth: {oauth: {resource: 'https://mcp.example.com/mcp#x', authorization_servers: [{issuer: https://i.example}], scopes: {a: viewer}}}", "auth.oauth.resource"},
		{"no server", "auth: {oauth: {resource: https://m.example/mcp, scopes: {a: viewer}}}", "auth.oauth.authorization_servers"},
		{"an http issuer afar", "auth: {oauth: {resource: https://m.example/mcp, authorization_servers: [{issuer: http://i.example}], scopes: {a: viewer}}}", "auth.oauth.authorization_servers[0].issuer"},
		{"an issuer twice", "auth: {oauth: {resource: https://m.example/mcp, authorization_servers: [{issuer: https://i.example}, {issuer: https://i.example}], scopes: {a: viewer}}}", "auth.oauth.authorization_servers[1].issuer"},
		{"a symmetric algorithm", "auth: {oauth: {resource: https://m.example/mcp, authorization_servers: [{issuer: https://i.example, algorithm: HS256}], scopes: {a: viewer}}}", "auth.oauth.authorization_servers[0].algorithm"},
		{"no way to a role", "auth: {oauth: {resource: https://m.example/mcp, authorization_servers: [{issuer: https://i.example}]}}", "auth.oauth.authorization_servers[0]"},
		{"a scope to an unknown role", "auth: {oauth: {resource: https://m.example/mcp, authorization_servers: [{issuer: https://i.example}], scopes: {a: root}}}", "auth.oauth.scopes.a"},
		{"a lifetime without the built-in server", "auth: {oauth: {resource: https://m.example/mcp, authorization_servers: [{issuer: https://i.example}], scopes: {a: viewer}, access_lifetime: 5m}}", "auth.oauth.access_lifetime"},
		{"a bad refresh lifetime", "auth: {oauth: {resource: https://m.example/mcp, builtin: true, refresh_lifetime: soon}}", "auth.oauth.refresh_lifetime"},
		{"a negative client limit", "auth: {oauth: {resource: https://m.example/mcp, builtin: true, max_clients: -1}}", "auth.oauth.max_clients"},
		{"authentication off", "auth: {disabled: true, oauth: {resource: https://m.example/mcp, authorization_servers: [{issuer: https://i.example}], scopes: {a: viewer}}}", "auth.oauth"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml))
			var ke *KeyError
			if !errors.As(err, &ke) || ke.Key != c.key {
				t.Errorf("%v, want a KeyError at %s", err, c.key)
			}
		})
	}
}

// A backend's oauth is refused, naming the key, wherever it could not
// work.
func TestBackendOAuthErrorsNameTheKey(t *testing.T) {
	const base = "backends:\n  - name: r\n    kind: http\n    url: https://tools.example/mcp\n"
	if _, err := Parse([]byte(base + "    oauth: {client_id: gw, client_secret_from: S, auth_method: client_secret_post}\n")); err != nil {
		t.Fatalf("a valid backend oauth: %v", err)
	}
	for _, c := range []struct{ name, yaml, key string }{
		{"no client id", base + "    oauth: {client_secret_from: S}\n", "backends[0].oauth.client_id"},
		{"no secret", base + "    oauth: {client_id: gw}\n", "backends[0].oauth"},
		{"two secrets", base + "    oauth: {client_id: gw, client_secret_from: S, client_secret_file: /f}\n", "backends[0].oauth"},
		{"an unknown auth method", base + "    oauth: {client_id: gw, client_secret_from: S, auth_method: private_key_jwt}\n", "backends[0].oauth.auth_method"},
		{"an http token URL afar", base + "    oauth: {client_id: gw, client_secret_from: S, token_url: http://as.example/token}\n", "backends[0].oauth.token_url"},
		{"an Authorization header beside it", base + "    headers_from: {Authorization: TOK}\n    oauth: {client_id: gw, client_secret_from: S}\n", "backends[0].headers_from.Authorization"},
		{"on a stdio backend", "backends:\n  - name: s\n    kind: stdio\n    command: [x]\n    oauth: {client_id: gw, client_secret_from: S}\n", "backends[0].oauth"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml))
			var ke *KeyError
			if !errors.As(err, &ke) || ke.Key != c.key {
				t.Errorf("%v, want a KeyError at %s", err, c.key)
			}
		})
	}
}
