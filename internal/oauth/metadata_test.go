package oauth_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/oauth"
	"github.com/mcpgate/mcpgate/internal/oauthtest"
)

func TestAuthorizationServerDiscovery(t *testing.T) {
	t.Run("the well-known URLs in the specification's order", func(t *testing.T) {
		for issuer, want := range map[string][]string{
			"https://as.example": {"https://as.example/.well-known/oauth-authorization-server", "https://as.example/.well-known/openid-configuration"},
			"https://as.example/tenant/1": {"https://as.example/.well-known/oauth-authorization-server/tenant/1",
				"https://as.example/.well-known/openid-configuration/tenant/1", "https://as.example/tenant/1/.well-known/openid-configuration"},
		} {
			got, err := oauth.MetadataURLs(issuer)
			if err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s: %v %v", issuer, got, err)
			}
		}
	})
	t.Run("RFC 8414 metadata is found first", func(t *testing.T) {
		is := oauthtest.New(t, "/realm")
		md, err := oauth.DiscoverAuthorizationServer(context.Background(), is.Server.Client(), is.ID)
		if err != nil || md.Issuer != is.ID || md.TokenEndpoint != is.ID+"/token" {
			t.Errorf("%+v %v", md, err)
		}
	})
	t.Run("OpenID discovery is the fallback", func(t *testing.T) {
		mux := http.NewServeMux()
		srv := httptest.NewServer(mux)
		defer srv.Close()
		mux.HandleFunc("/idp/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte(`{"issuer":"` + srv.URL + `/idp","jwks_uri":"` + srv.URL + `/jwks"}`))
		})
		md, err := oauth.DiscoverAuthorizationServer(context.Background(), srv.Client(), srv.URL+"/idp")
		if err != nil || md.JWKSURI != srv.URL+"/jwks" {
			t.Errorf("%+v %v", md, err)
		}
	})
	t.Run("metadata naming another issuer is refused", func(t *testing.T) {
		is := oauthtest.New(t, "")
		is.Metadata["issuer"] = "https://evil.example"
		_, err := oauth.DiscoverAuthorizationServer(context.Background(), is.Server.Client(), is.ID)
		if err == nil || !strings.Contains(err.Error(), "must be equal") {
			t.Errorf("%v", err)
		}
	})
	t.Run("no metadata anywhere names every URL tried", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		defer srv.Close()
		_, err := oauth.DiscoverAuthorizationServer(context.Background(), srv.Client(), srv.URL)
		if err == nil || !strings.Contains(err.Error(), `oauth-authorization-server" (404)`) || !strings.Contains(err.Error(), `openid-configuration" (404)`) {
			t.Errorf("%v", err)
		}
	})
	t.Run("only https, or http on loopback", func(t *testing.T) {
		for u, ok := range map[string]bool{"https://as.example": true, "http://127.0.0.1:9": true, "http://localhost:9": true,
			"http://as.example": false, "ftp://as.example": false, "as.example": false} {
			if err := oauth.CheckFetchURL(u); (err == nil) != ok {
				t.Errorf("%s: %v", u, err)
			}
		}
	})
}

// A server of 2025-03-26 serves no resource metadata: its authorization
// server is at its origin — by that origin's RFC 8414 metadata, or, when
// there is none (404), the default endpoints there. Only 404s everywhere
// mean such a server: a resource whose metadata fails otherwise is not
// taken for one.
func TestAServerWithoutResourceMetadataIsOf20250326(t *testing.T) {
	for _, c := range []struct {
		rule     string
		prm      int    // what the resource metadata URLs answer
		metadata string // the origin's AS metadata ("": 404; "{issuer}" stands for the origin)
		want     string // the token endpoint found, or the error's words
		legacy   bool
	}{
		{"no metadata at all: the default endpoints", 404, "", "{origin}/token", true},
		{"the origin's metadata", 404, `{"issuer":"{origin}","authorization_endpoint":"{origin}/oauth/authorize","token_endpoint":"{origin}/oauth/token"}`, "{origin}/oauth/token", true},
		{"the origin's metadata naming another issuer", 404, `{"issuer":"https://attacker.example.com","token_endpoint":"{origin}/t"}`, "must be equal", true},
		{"resource metadata that fails otherwise", 500, "", "no resource metadata", false},
	} {
		t.Run(c.rule, func(t *testing.T) {
			var srv *httptest.Server
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource"):
					w.WriteHeader(c.prm)
				case r.URL.Path == "/.well-known/oauth-authorization-server" && c.metadata != "":
					if r.Header.Get("MCP-Protocol-Version") != "2025-03-26" {
						t.Errorf("the metadata request's MCP-Protocol-Version: %q", r.Header.Get("MCP-Protocol-Version"))
					}
					w.Header().Set("Content-Type", "application/json")
					_, _ = io.WriteString(w, strings.ReplaceAll(c.metadata, "{origin}", srv.URL))
				default:
					http.NotFound(w, r)
				}
			}))
			t.Cleanup(srv.Close)
			want := strings.ReplaceAll(c.want, "{origin}", srv.URL)
			_, err := oauth.DiscoverResource(context.Background(), srv.Client(), srv.URL+"/mcp", "")
			if errors.Is(err, oauth.ErrNoResourceMetadata) != c.legacy {
				t.Fatalf("DiscoverResource: %v; want ErrNoResourceMetadata %v", err, c.legacy)
			}
			if !c.legacy {
				return
			}
			issuer, md, err := oauth.LegacyAuthorizationServer(context.Background(), srv.Client(), srv.URL+"/mcp")
			switch {
			case err != nil && !strings.Contains(err.Error(), want):
				t.Errorf("%v, want %q", err, want)
			case err == nil && (md.TokenEndpoint != want || issuer != srv.URL || !slices.Contains(md.CodeChallengeMethodsSupported, "S256") && c.metadata == ""):
				t.Errorf("issuer %s, metadata %+v; want the token endpoint %s", issuer, md, want)
			}
		})
	}
}
