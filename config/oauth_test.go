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
