package oauthclient_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/auth/oauthclient"
	"github.com/mcpgate/mcpgate/internal/auth/oauthmeta"
)

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
			_, err := oauthclient.DiscoverResource(context.Background(), srv.Client(), srv.URL+"/mcp", "")
			if errors.Is(err, oauthclient.ErrNoResourceMetadata) != c.legacy {
				t.Fatalf("DiscoverResource: %v; want ErrNoResourceMetadata %v", err, c.legacy)
			}
			if !c.legacy {
				return
			}
			issuer, md, err := oauthmeta.LegacyAuthorizationServer(context.Background(), srv.Client(), srv.URL+"/mcp")
			switch {
			case err != nil && !strings.Contains(err.Error(), want):
				t.Errorf("%v, want %q", err, want)
			case err == nil && (md.TokenEndpoint != want || issuer != srv.URL || !slices.Contains(md.CodeChallengeMethodsSupported, "S256") && c.metadata == ""):
				t.Errorf("issuer %s, metadata %+v; want the token endpoint %s", issuer, md, want)
			}
		})
	}
}
