package config

import (
	"errors"
	"strings"
	"testing"
)

// auth.oauth is refused, naming the key, wherever it could not work.
// On a loopback listen address with a port, the resource defaults to the
// listen URL's /mcp, and follows the listen address a flag sets later.
func TestTheResourceDefaultsToTheLoopbackListenURL(t *testing.T) {
	c, err := Parse([]byte("listen: 127.0.0.1:9000\nauth: {oauth: {builtin: true}}"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Auth.OAuth.Resource != "http://127.0.0.1:9000/mcp" {
		t.Errorf("resource %q", c.Auth.OAuth.Resource)
	}
	c.Listen = "127.0.0.1:9001" // --listen
	if err := c.Validate(); err != nil || c.Auth.OAuth.Resource != "http://127.0.0.1:9001/mcp" {
		t.Errorf("after --listen: %q %v", c.Auth.OAuth.Resource, err)
	}
	c, err = Parse([]byte("auth: {oauth: {builtin: true}}"))
	if err != nil || c.Auth.OAuth.Resource != "http://127.0.0.1:8080/mcp" {
		t.Errorf("the default listen address: %v", err)
	}
}

func TestOAuthConfigurationErrorsNameTheKey(t *testing.T) {
	const ok = "auth:\n  oauth:\n    resource: https://mcp.example.com/mcp\n    authorization_servers: [{issuer: https://idp.example.com}]\n    scopes: {mcp:read: viewer}\n"
	if _, err := Parse([]byte(ok)); err != nil {
		t.Fatalf("a valid auth.oauth: %v", err)
	}
	if _, err := Parse([]byte("auth: {oauth: {resource: http://127.0.0.1:8080/mcp, builtin: true, access_lifetime: 5m, max_clients: 10}}")); err != nil {
		t.Fatalf("the built-in server alone: %v", err)
	}
	for _, c := range []struct{ name, yaml, key string }{
		{"no resource off loopback", "listen: 0.0.0.0:8080\nauth: {oauth: {authorization_servers: [{issuer: https://i.example}], scopes: {a: viewer}}}", "auth.oauth.resource"},
		{"no resource on a port chosen at start", "listen: 127.0.0.1:0\nauth: {oauth: {builtin: true}}", "auth.oauth.resource"},
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
	for _, valid := range []string{"{client_id: gw, client_secret_from: S, auth_method: client_secret_post, issuer: https://as.example}",
		"{client_id: gw, client_secret_from: S, token_url: https://as.example/token}",
		"{client_id: gw, auth_method: private_key_jwt, private_key_file: /k.pem, issuer: https://as.example}",
		"{client_id: gw, auth_method: private_key_jwt, private_key_from: K, signing_alg: PS256, token_url: https://as.example/token}",
		"{grant: jwt_bearer, assertion_file: /var/run/secrets/tokens/mcp, issuer: https://as.example}",
		"{grant: jwt_bearer, client_id: workload, assertion_from: WORKLOAD_JWT, scopes: [mcp], issuer: https://as.example}"} {
		if _, err := Parse([]byte(base + "    oauth: " + valid + "\n")); err != nil {
			t.Fatalf("a valid backend oauth %s: %v", valid, err)
		}
	}
	for _, c := range []struct{ name, yaml, key string }{
		{"no client id", base + "    oauth: {client_secret_from: S}\n", "backends[0].oauth.client_id"},
		{"no secret", base + "    oauth: {client_id: gw}\n", "backends[0].oauth"},
		{"two secrets", base + "    oauth: {client_id: gw, client_secret_from: S, client_secret_file: /f}\n", "backends[0].oauth"},
		{"an unknown auth method", base + "    oauth: {client_id: gw, client_secret_from: S, auth_method: tls_client_auth}\n", "backends[0].oauth.auth_method"},
		{"private_key_jwt without a key", base + "    oauth: {client_id: gw, auth_method: private_key_jwt}\n", "backends[0].oauth"},
		{"private_key_jwt with two keys", base + "    oauth: {client_id: gw, auth_method: private_key_jwt, private_key_from: K, private_key_file: /k}\n", "backends[0].oauth"},
		{"private_key_jwt with a secret too", base + "    oauth: {client_id: gw, auth_method: private_key_jwt, private_key_from: K, client_secret_from: S}\n", "backends[0].oauth"},
		{"a private key without private_key_jwt", base + "    oauth: {client_id: gw, client_secret_from: S, private_key_from: K}\n", "backends[0].oauth"},
		{"jwt_bearer without an assertion", base + "    oauth: {grant: jwt_bearer}\n", "backends[0].oauth"},
		{"jwt_bearer with two assertions", base + "    oauth: {grant: jwt_bearer, assertion_file: /f, assertion_from: A}\n", "backends[0].oauth"},
		{"jwt_bearer with a secret", base + "    oauth: {grant: jwt_bearer, assertion_file: /f, client_secret_from: S}\n", "backends[0].oauth"},
		{"jwt_bearer with a private key", base + "    oauth: {grant: jwt_bearer, assertion_file: /f, auth_method: private_key_jwt, private_key_from: K}\n", "backends[0].oauth"},
		{"an assertion without jwt_bearer", base + "    oauth: {client_id: gw, client_secret_from: S, assertion_file: /f}\n", "backends[0].oauth"},
		{"an assertion with the authorization code grant", base + "    oauth: {grant: authorization_code, client_id: gw, assertion_from: A}\n", "backends[0].oauth"},
		{"an unknown grant", base + "    oauth: {grant: password, client_id: gw, client_secret_from: S}\n", "backends[0].oauth.grant"},
		{"private_key_jwt with the authorization code grant", base + "    oauth: {grant: authorization_code, client_id: gw, private_key_from: K}\n", "backends[0].oauth"},
		{"an http token URL afar", base + "    oauth: {client_id: gw, client_secret_from: S, token_url: http://as.example/token}\n", "backends[0].oauth.token_url"},
		{"a secret with neither token URL nor issuer", base + "    oauth: {client_id: gw, client_secret_from: S}\n", "backends[0].oauth"},
		{"a private key with neither token URL nor issuer", base + "    oauth: {client_id: gw, auth_method: private_key_jwt, private_key_file: /k.pem}\n", "backends[0].oauth"},
		{"an assertion with neither token URL nor issuer", base + "    oauth: {grant: jwt_bearer, assertion_file: /f}\n", "backends[0].oauth"},
		{"an http issuer afar", base + "    oauth: {client_id: gw, client_secret_from: S, issuer: http://as.example}\n", "backends[0].oauth.issuer"},
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

// oauth_client and a backend's authorization code client are refused,
// naming the key, wherever they could not work; the key's value never
// appears in the error.
func TestOAuthClientErrorsNameTheKey(t *testing.T) {
	const base = "backends:\n  - name: r\n    kind: http\n    url: https://tools.example/mcp\n"
	t.Setenv("MCPGATE_TEST_BACKEND_KEY", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	t.Setenv("MCPGATE_TEST_SHORT_KEY", "hunter2hunter2")
	for _, ok := range []string{
		base + "    oauth: {grant: authorization_code, client_id: pre}\n",
		base + "    oauth: {grant: authorization_code, client_id: pre, client_secret_from: S, auth_method: client_secret_post, issuer: https://as.example}\n",
		"oauth_client: {redirect_url: https://gw.example/oauth/callback, client_metadata_url: https://gw.example/oauth/client-metadata.json, key_from: MCPGATE_TEST_BACKEND_KEY}\n",
	} {
		if _, err := Parse([]byte(ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, c := range []struct{ name, yaml, key string }{
		{"an unknown grant", base + "    oauth: {grant: password, client_id: gw}\n", "backends[0].oauth.grant"},
		{"a pre-registered client without an id", base + "    oauth: {grant: authorization_code}\n", "backends[0].oauth.client_id"},
		{"a token URL for the code grant", base + "    oauth: {grant: authorization_code, client_id: c, token_url: https://as.example/token}\n", "backends[0].oauth.token_url"},
		{"none with a secret", base + "    oauth: {grant: authorization_code, client_id: c, client_secret_from: S, auth_method: none}\n", "backends[0].oauth.auth_method"},
		{"a pre-registered secret without an issuer", base + "    oauth: {grant: authorization_code, client_id: c, client_secret_from: S}\n", "backends[0].oauth.issuer"},
		{"basic without a secret", base + "    oauth: {grant: authorization_code, client_id: c, auth_method: client_secret_basic}\n", "backends[0].oauth.auth_method"},
		{"a redirect elsewhere", "oauth_client: {redirect_url: https://gw.example/cb}\n", "oauth_client.redirect_url"},
		{"an http redirect afar", "oauth_client: {redirect_url: http://gw.example/oauth/callback}\n", "oauth_client.redirect_url"},
		{"an http metadata document", "oauth_client: {client_metadata_url: http://gw.example/c.json}\n", "oauth_client.client_metadata_url"},
		{"two keys", "oauth_client: {key_from: A, key_file: /k}\n", "oauth_client"},
		{"a key not in the environment", "oauth_client: {key_from: MCPGATE_TEST_SURELY_UNSET}\n", "oauth_client.key_from"},
		{"a short key", "oauth_client: {key_from: MCPGATE_TEST_SHORT_KEY}\n", "oauth_client.key"},
		{"a missing key file", "oauth_client: {key_file: /surely/not/here}\n", "oauth_client.key_file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml))
			var ke *KeyError
			if !errors.As(err, &ke) || ke.Key != c.key {
				t.Errorf("%v, want a KeyError at %s", err, c.key)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error quotes the key: %v", err)
			}
		})
	}
}

// auth.oauth.upstream is refused, naming the key, wherever it could not
// work.
func TestOAuthUpstreamErrorsNameTheKey(t *testing.T) {
	const pre = "auth:\n  oauth:\n    resource: https://m.example/mcp\n    builtin: true\n    upstream: "
	if _, err := Parse([]byte(pre + "{issuer: https://idp.example, client_id: gw, role_claim: groups, roles: {mcp-admins: admin}, default_role: viewer}\n")); err != nil {
		t.Fatalf("a valid upstream: %v", err)
	}
	for _, c := range []struct{ name, yaml, key string }{
		{"without the built-in server", "auth: {oauth: {resource: https://m.example/mcp, authorization_servers: [{issuer: https://i.example}], scopes: {a: viewer}, upstream: {issuer: https://idp.example, client_id: gw}}}", "auth.oauth.upstream"},
		{"no client id", pre + "{issuer: https://idp.example}\n", "auth.oauth.upstream.client_id"},
		{"an http issuer afar", pre + "{issuer: http://idp.example, client_id: gw}\n", "auth.oauth.upstream.issuer"},
		{"two secrets", pre + "{issuer: https://idp.example, client_id: gw, client_secret_from: A, client_secret_file: /f}\n", "auth.oauth.upstream"},
		{"a symmetric algorithm", pre + "{issuer: https://idp.example, client_id: gw, algorithm: HS256}\n", "auth.oauth.upstream.algorithm"},
		{"a value to an unknown role", pre + "{issuer: https://idp.example, client_id: gw, roles: {g: root}}\n", "auth.oauth.upstream.roles.g"},
		{"an unknown default role", pre + "{issuer: https://idp.example, client_id: gw, default_role: root}\n", "auth.oauth.upstream.default_role"},
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

// catalogue and a backend's short descriptions are refused, naming the
// key, wherever they could not work.
func TestCatalogueErrorsNameTheKey(t *testing.T) {
	const base = "backends:\n  - name: r\n    kind: http\n    url: https://tools.example/mcp\n"
	if _, err := Parse([]byte(base + "    short_descriptions: [{name: \"s*\", description: Search.}]\n    derive_short: title\ncatalogue: {view: compact, roles: {viewer: full}, tokens: {tok_a: compact}}\n")); err != nil {
		t.Fatalf("a valid catalogue: %v", err)
	}
	for _, c := range []struct{ name, yaml, key string }{
		{"an unknown view", "catalogue: {view: tiny}\n", "catalogue.view"},
		{"an unknown role", "catalogue: {roles: {root: compact}}\n", "catalogue.roles.root"},
		{"a role's unknown view", "catalogue: {roles: {viewer: tiny}}\n", "catalogue.roles.viewer"},
		{"a token's unknown view", "catalogue: {tokens: {tok_a: tiny}}\n", "catalogue.tokens.tok_a"},
		{"an unknown pinning", "catalogue: {pinning: strict}\n", "catalogue.pinning"},
		{"an empty short description", base + "    short_descriptions: [{name: s, description: \" \"}]\n", "backends[0].short_descriptions[0].description"},
		{"a short description for no name", base + "    short_descriptions: [{description: S.}]\n", "backends[0].short_descriptions[0].name"},
		{"a bad pattern", base + "    short_descriptions: [{name: \"[\", description: S.}]\n", "backends[0].short_descriptions[0].name"},
		{"an unknown kind", base + "    short_descriptions: [{kind: tools, name: s, description: S.}]\n", "backends[0].short_descriptions[0].kind"},
		{"an unknown derivation", base + "    derive_short: summary\n", "backends[0].derive_short"},
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
