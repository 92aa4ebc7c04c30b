package config

import (
	"strings"
	"testing"
)

// The identity keys: per_user with a vault, its key going in a header
// for http and sse and in a variable for stdio and process; refused
// elsewhere and when incomplete, naming the key.
func TestBackendIdentityKeys(t *testing.T) {
	t.Setenv("MCPGATE_TEST_VAULT_KEY", strings.Repeat("ab", 32))
	const stdio = `{name: a, kind: stdio, command: [x]`
	const http = `{name: a, kind: http, url: "http://127.0.0.1:1/mcp"`
	const xc = `{token_url: "https://idp.example/token", client_id: gw, client_secret_from: S}`
	tests := []struct {
		name, backend string
		key           string // the key refused; "" when valid
	}{
		{"shared by default", stdio + `}`, ""},
		{"per_user http in a header", http + `, identity: per_user, credential: {vault: {header: X-Api-Key}}}`, ""},
		{"per_user stdio in a variable", stdio + `, identity: per_user, credential: {vault: {env: API_KEY}}}`, ""},
		{"per_user process", `{name: a, kind: process, command: [x], identity: per_user, credential: {vault: {env: API_KEY}}}`, ""},
		{"per_user with an idle timeout and a cap", stdio + `, identity: per_user, credential: {vault: {env: K}}, session_idle_timeout: 1m, session_max: 5}`, ""},
		{"unknown mode", stdio + `, identity: everyone}`, "backends[0].identity"},
		{"per_user without a credential", http + `, identity: per_user}`, "backends[0].credential"},
		{"a credential when shared", http + `, credential: {vault: {header: X}}}`, "backends[0].credential"},
		{"a credential naming no way", http + `, identity: per_user, credential: {}}`, "backends[0].credential"},
		{"per_user on a proxy", `{name: a, kind: proxy, url: "ws://127.0.0.1:1", identity: per_user, credential: {vault: {env: K}}}`, "backends[0].identity"},
		{"http's key in a variable", http + `, identity: per_user, credential: {vault: {env: K}}}`, "backends[0].credential.vault.header"},
		{"stdio's key in a header", stdio + `, identity: per_user, credential: {vault: {header: X}}}`, "backends[0].credential.vault.env"},
		{"not a header name", http + `, identity: per_user, credential: {vault: {header: "X Key"}}}`, "backends[0].credential.vault.header"},
		{"not a variable name", stdio + `, identity: per_user, credential: {vault: {env: "1A=B"}}}`, "backends[0].credential.vault.env"},
		{"exchange at a token endpoint", http + `, identity: per_user, credential: {exchange: ` + xc + `}}`, ""},
		{"exchange with a private key", http + `, identity: per_user, credential: {exchange: {token_url: "https://idp.example/token", client_id: gw, auth_method: private_key_jwt, private_key_file: /k.pem, subject_token_type: jwt}}}`, ""},
		{"exchange as the workload", http + `, identity: per_user, credential: {exchange: {token_url: "https://idp.example/token", client_id: gw, assertion_file: /var/run/secrets/token}}}`, ""},
		{"exchange as the workload and by a secret", http + `, identity: per_user, credential: {exchange: {token_url: "https://idp.example/token", client_id: gw, assertion_file: /t, client_secret_from: S}}}`, "backends[0].credential.exchange"},
		{"exchange and vault both", http + `, identity: per_user, credential: {vault: {header: X}, exchange: ` + xc + `}}`, "backends[0].credential"},
		{"exchange for stdio", stdio + `, identity: per_user, credential: {exchange: ` + xc + `}}`, "backends[0].credential.exchange"},
		{"exchange without a token endpoint", http + `, identity: per_user, credential: {exchange: {client_id: gw, client_secret_from: S}}}`, "backends[0].credential.exchange.token_url"},
		{"exchange without a client", http + `, identity: per_user, credential: {exchange: {token_url: "https://idp.example/token"}}}`, "backends[0].credential.exchange.client_id"},
		{"exchange naming a grant", http + `, identity: per_user, credential: {exchange: {grant: jwt_bearer, token_url: "https://idp.example/token"}}}`, "backends[0].credential.exchange.grant"},
		{"exchange of an unknown token type", http + `, identity: per_user, credential: {exchange: {token_url: "https://idp.example/token", client_id: gw, client_secret_from: S, subject_token_type: saml}}}`, "backends[0].credential.exchange.subject_token_type"},
		{"exchange for an ID-JAG", http + `, identity: per_user, credential: {exchange: {token_url: "https://idp.example/token", client_id: gw, client_secret_from: S, subject_token_type: id_token, requested_token_type: id-jag, authorization: {client_id: mcp-client, client_secret_from: T}}}}`, ""},
		{"an ID-JAG without its authorization", http + `, identity: per_user, credential: {exchange: {token_url: "https://idp.example/token", client_id: gw, client_secret_from: S, requested_token_type: id-jag}}}`, "backends[0].credential.exchange.authorization"},
		{"an ID-JAG's authorization without a client", http + `, identity: per_user, credential: {exchange: {token_url: "https://idp.example/token", client_id: gw, client_secret_from: S, requested_token_type: id-jag, authorization: {client_secret_from: T}}}}`, "backends[0].credential.exchange.authorization.client_id"},
		{"an authorization without an ID-JAG", http + `, identity: per_user, credential: {exchange: {token_url: "https://idp.example/token", client_id: gw, client_secret_from: S, authorization: {client_id: c, client_secret_from: T}}}}`, "backends[0].credential.exchange.authorization"},
		{"exchange beside a static bearer", http + `, headers_from: {Authorization: T}, identity: per_user, credential: {exchange: ` + xc + `}}`, "backends[0].headers_from.Authorization"},
		{"oauth with a client the gateway registers", http + `, identity: per_user, credential: {oauth: {}}}`, ""},
		{"oauth with scopes and an issuer", http + `, identity: per_user, credential: {oauth: {scopes: [repo], issuer: "https://as.example"}}}`, ""},
		{"oauth with a client registered out of band", http + `, identity: per_user, credential: {oauth: {client_id: gw, client_secret_from: S, issuer: "https://as.example"}}}`, ""},
		{"oauth with a public client", http + `, identity: per_user, credential: {oauth: {client_id: gw, auth_method: none}}}`, ""},
		{"oauth's secret with no issuer", http + `, identity: per_user, credential: {oauth: {client_id: gw, client_secret_from: S}}}`, "backends[0].credential.oauth.issuer"},
		{"oauth's secret with no client", http + `, identity: per_user, credential: {oauth: {client_secret_from: S, issuer: "https://as.example"}}}`, "backends[0].credential.oauth.client_id"},
		{"oauth of another grant", http + `, identity: per_user, credential: {oauth: {grant: client_credentials}}}`, "backends[0].credential.oauth.grant"},
		{"oauth with a token endpoint", http + `, identity: per_user, credential: {oauth: {client_id: gw, token_url: "https://as.example/token"}}}`, "backends[0].credential.oauth.token_url"},
		{"oauth for stdio", stdio + `, identity: per_user, credential: {oauth: {}}}`, "backends[0].credential.oauth"},
		{"oauth when shared", http + `, credential: {oauth: {}}}`, "backends[0].credential"},
		{"oauth and vault both", http + `, identity: per_user, credential: {vault: {header: X}, oauth: {}}}`, "backends[0].credential"},
		{"oauth beside the backend's own", http + `, oauth: {grant: authorization_code, client_id: c}, identity: per_user, credential: {oauth: {}}}`, "backends[0].oauth"},
		{"oauth beside a static bearer", http + `, headers_from: {Authorization: T}, identity: per_user, credential: {oauth: {}}}`, "backends[0].headers_from.Authorization"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantKey(t, "vault: {key_from: MCPGATE_TEST_VAULT_KEY}\nbackends: ["+tt.backend+"]\n", tt.key)
		})
	}
}

// A vault needs the key that seals it; an unreadable or malformed key is
// refused naming vault's key, never quoting it.
func TestTheVaultNeedsItsKey(t *testing.T) {
	const backend = `backends: [{name: a, kind: stdio, command: [x], identity: per_user, credential: {vault: {env: K}}}]` + "\n"
	t.Setenv("MCPGATE_TEST_VAULT_KEY", "not-hex-and-secret")
	wantKey(t, backend, "backends[0].credential.vault")
	wantKey(t, "vault: {key_from: MCPGATE_TEST_UNSET_KEY}\n"+backend, "vault.key_from")
	wantKey(t, "vault: {key_file: /nonexistent/key}\n"+backend, "vault.key_file")
	_, err := Parse([]byte("vault: {key_from: MCPGATE_TEST_VAULT_KEY}\n" + backend))
	if err == nil || strings.Contains(err.Error(), "not-hex-and-secret") {
		t.Errorf("a malformed key: %v (must be refused, not quoted)", err)
	}
	wantKey(t, "vault: {key_from: A, key_file: /f}\n"+backend, "vault")
	wantKey(t, `backends: [{name: a, kind: http, url: "http://127.0.0.1:1/mcp", identity: per_user, credential: {oauth: {}}}]`, "backends[0].credential.oauth")
}

// Each person authorizes a backend of credential.oauth from their own
// console page, through the gateway's OAuth client: there is no page with
// authentication off, and no client with oauth_client disabled.
func TestPersonalOAuthNeedsAuthentication(t *testing.T) {
	t.Setenv("MCPGATE_TEST_VAULT_KEY", strings.Repeat("ab", 32))
	wantKey(t, "auth: {disabled: true}\nvault: {key_from: MCPGATE_TEST_VAULT_KEY}\n"+
		`backends: [{name: a, kind: http, url: "http://127.0.0.1:1/mcp", identity: per_user, credential: {oauth: {}}}]`, "backends[0].credential.oauth")
	wantKey(t, "oauth_client: {disabled: true}\nvault: {key_from: MCPGATE_TEST_VAULT_KEY}\n"+
		`backends: [{name: a, kind: http, url: "http://127.0.0.1:1/mcp", identity: per_user, credential: {oauth: {}}}]`, "backends[0].credential.oauth")
}
