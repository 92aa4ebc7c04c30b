package auth_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgate/mcpgate/internal/auth"
	"github.com/mcpgate/mcpgate/internal/egress"
	"github.com/mcpgate/mcpgate/internal/egress/egresstest"
	"github.com/mcpgate/mcpgate/internal/oauthtest"
	"github.com/mcpgate/mcpgate/internal/policy"
	"github.com/mcpgate/mcpgate/mcp"
)

const resource = "http://127.0.0.1:8080/mcp"

func oauthVerifier(t *testing.T, issuers ...auth.OAuthIssuer) *auth.OAuthVerifier {
	t.Helper()
	roles, _ := policy.NewRoles(nil)
	v, err := auth.NewOAuthVerifier(context.Background(), auth.OAuthConfig{
		Resource: resource, Issuers: issuers, Level: roles.Level,
		Scopes: map[string]string{"mcp:read": "viewer", "mcp:tools": "editor", "mcp:admin": "admin"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// oauthCheck runs token through an Authenticator that takes only OAuth,
// and returns the status, the challenge and the identity it let through.
func oauthCheck(t *testing.T, v *auth.OAuthVerifier, token string) (int, string, mcp.Identity) {
	t.Helper()
	roles, _ := policy.NewRoles(nil)
	a, err := auth.New(auth.Options{OAuth: v, KnownRole: roles.Known, ResourceMetadata: "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	var seen mcp.Identity
	h := a.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen, _ = mcp.IdentityFrom(r.Context()) }))
	req := httptest.NewRequest("POST", "/mcp", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Header().Get("WWW-Authenticate"), seen
}

func TestOAuthAccessTokens(t *testing.T) {
	is := oauthtest.New(t, "")
	other := oauthtest.New(t, "/other") // a real issuer, but not trusted
	v := oauthVerifier(t, auth.OAuthIssuer{Issuer: is.ID}, auth.OAuthIssuer{Issuer: oauthtest.New(t, "/tenant").ID, RoleClaim: "mcpgate_role"})
	for _, c := range []struct {
		name      string
		token     string
		status    int
		role      string
		challenge string
	}{
		{"the highest role of its scopes", is.Token(t, map[string]any{"sub": "ann", "aud": resource, "scope": "openid mcp:read mcp:tools"}), 200, "editor", ""},
		{"scp as an array", is.Token(t, map[string]any{"sub": "ann", "aud": []string{"other", resource}, "scp": []string{"mcp:admin"}}), 200, "admin", ""},
		{"another audience", is.Token(t, map[string]any{"sub": "ann", "aud": "http://127.0.0.1:9999/mcp", "scope": "mcp:read"}), 401, "", `error="invalid_token"`},
		{"no audience", is.Token(t, map[string]any{"sub": "ann", "scope": "mcp:read"}), 401, "", `error="invalid_token"`},
		{"an issuer not trusted", other.Token(t, map[string]any{"sub": "ann", "aud": resource, "scope": "mcp:read"}), 401, "", `error_description="the token's issuer is not trusted here"`},
		{"expired", is.Token(t, map[string]any{"sub": "ann", "aud": resource, "scope": "mcp:read", "exp": time.Now().Add(-time.Hour).Unix()}), 401, "", `error="invalid_token"`},
		{"no exp", is.Token(t, map[string]any{"sub": "ann", "aud": resource, "scope": "mcp:read", "exp": nil}), 401, "", `error="invalid_token"`},
		{"no mapped scope", is.Token(t, map[string]any{"sub": "ann", "aud": resource, "scope": "openid email"}), 403, "",
			`Bearer error="insufficient_scope", scope="mcp:read", resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"`},
		{"no credential", "", 401, "", `Bearer realm="mcpgate", resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp", scope="mcp:read"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, challenge, id := oauthCheck(t, v, c.token)
			if status != c.status || id.Role != c.role || !strings.Contains(challenge, c.challenge) {
				t.Errorf("status %d role %q challenge %q; want %d %q %q", status, id.Role, challenge, c.status, c.role, c.challenge)
			}
			if status == 200 && id.Subject != "ann" {
				t.Errorf("subject %q", id.Subject)
			}
			if status == 401 && !strings.Contains(challenge, `resource_metadata="`) {
				t.Errorf("a 401 without resource_metadata: %q", challenge)
			}
		})
	}
	t.Run("a signature by another key is refused", func(t *testing.T) {
		tok := is.Token(t, map[string]any{"sub": "ann", "aud": resource, "scope": "mcp:read"})
		parts := strings.Split(tok, ".")
		forged := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": is.ID, "sub": "ann", "aud": resource, "scope": "mcp:admin", "exp": time.Now().Add(time.Minute).Unix()})
		forged.Header["kid"] = "k1"
		s, _ := forged.SignedString(rsaOther())
		if status, _, _ := oauthCheck(t, v, strings.Join([]string{strings.Split(s, ".")[0], strings.Split(s, ".")[1], parts[2]}, ".")); status != 401 {
			t.Errorf("a token with another's signature: %d", status)
		}
		if status, _, _ := oauthCheck(t, v, s); status != 401 {
			t.Errorf("a token signed by another key: %d", status)
		}
	})
}

// An issuer's role claim stands in where no mapped scope does.
func TestOAuthRoleClaim(t *testing.T) {
	is := oauthtest.New(t, "/tenant")
	v := oauthVerifier(t, auth.OAuthIssuer{Issuer: is.ID, RoleClaim: "mcpgate_role"})
	status, _, id := oauthCheck(t, v, is.Token(t, map[string]any{"sub": "bo", "aud": resource, "mcpgate_role": "editor"}))
	if status != 200 || id.Role != "editor" {
		t.Errorf("%d %+v", status, id)
	}
	status, _, _ = oauthCheck(t, v, is.Token(t, map[string]any{"sub": "bo", "aud": resource, "mcpgate_role": "root"}))
	if status != 401 {
		t.Errorf("an unknown role in the claim: %d", status)
	}
}

func TestOAuthVerifierRefusesAConfigurationThatCannotWork(t *testing.T) {
	func() {
		roles, _ := policy.NewRoles(nil)
		is := oauthtest.New(t, "")
		for name, cfg := range map[string]auth.OAuthConfig{
			"no resource":         {Issuers: []auth.OAuthIssuer{{Issuer: is.ID}}, Scopes: map[string]string{"a": "viewer"}, Level: roles.Level},
			"an http resource":    {Resource: "http://mcp.example/mcp", Issuers: []auth.OAuthIssuer{{Issuer: is.ID}}, Scopes: map[string]string{"a": "viewer"}, Level: roles.Level},
			"a fragment":          {Resource: "https://mcp.example/mcp#x", Issuers: []auth.OAuthIssuer{{Issuer: is.ID}}, Scopes: map[string]string{"a": "viewer"}, Level: roles.Level},
			"no issuer":           {Resource: resource, Scopes: map[string]string{"a": "viewer"}, Level: roles.Level},
			"an unknown role":     {Resource: resource, Issuers: []auth.OAuthIssuer{{Issuer: is.ID}}, Scopes: map[string]string{"a": "root"}, Level: roles.Level},
			"no way to a role":    {Resource: resource, Issuers: []auth.OAuthIssuer{{Issuer: is.ID}}, Level: roles.Level},
			"an unreachable one":  {Resource: resource, Issuers: []auth.OAuthIssuer{{Issuer: "http://127.0.0.1:1"}}, Scopes: map[string]string{"a": "viewer"}, Level: roles.Level},
			"an http issuer afar": {Resource: resource, Issuers: []auth.OAuthIssuer{{Issuer: "http://as.example"}}, Scopes: map[string]string{"a": "viewer"}, Level: roles.Level},
		} {
			if _, err := auth.NewOAuthVerifier(context.Background(), cfg); err == nil {
				t.Errorf("%s: accepted", name)
			}
		}
	}()
}

// A configured issuer's origin is reached whatever its address, but a
// jwks_uri its metadata names elsewhere goes out under the outbound
// policy: a key set at 127.0.0.2 (a stand-in for an address inside the
// network, which fails the test if reached) is refused at dial time, and
// the verifier is not made.
func TestADiscoveredKeySetIsFetchedUnderTheOutboundPolicy(t *testing.T) {
	inside, reached := egresstest.Forbidden(t)
	is := oauthtest.New(t, "")
	is.Metadata["jwks_uri"] = inside + "/jwks"
	roles, _ := policy.NewRoles(nil)
	_, err := auth.NewOAuthVerifier(context.Background(), auth.OAuthConfig{Resource: resource, Level: roles.Level,
		Issuers: []auth.OAuthIssuer{{Issuer: is.ID}}, Scopes: map[string]string{"mcp:read": "viewer"}})
	if !errors.Is(err, egress.ErrRefusedAddress) {
		t.Errorf("a key set at another address: %v, want it refused", err)
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the key set at a refused address was fetched %d times", n)
	}
}
