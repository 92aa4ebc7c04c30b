package oauthmeta_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/auth/oauthmeta"
	"github.com/mcpgate/mcpgate/internal/oauthtest"
)

func TestAuthorizationServerDiscovery(t *testing.T) {
	t.Run("the well-known URLs in the specification's order", func(t *testing.T) {
		for issuer, want := range map[string][]string{
			"https://as.example": {"https://as.example/.well-known/oauth-authorization-server", "https://as.example/.well-known/openid-configuration"},
			"https://as.example/tenant/1": {"https://as.example/.well-known/oauth-authorization-server/tenant/1",
				"https://as.example/.well-known/openid-configuration/tenant/1", "https://as.example/tenant/1/.well-known/openid-configuration"},
		} {
			got, err := oauthmeta.MetadataURLs(issuer)
			if err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s: %v %v", issuer, got, err)
			}
		}
	})
	t.Run("RFC 8414 metadata is found first", func(t *testing.T) {
		is := oauthtest.New(t, "/realm")
		md, err := oauthmeta.DiscoverAuthorizationServer(context.Background(), is.Server.Client(), is.ID)
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
		md, err := oauthmeta.DiscoverAuthorizationServer(context.Background(), srv.Client(), srv.URL+"/idp")
		if err != nil || md.JWKSURI != srv.URL+"/jwks" {
			t.Errorf("%+v %v", md, err)
		}
	})
	t.Run("metadata naming another issuer is refused", func(t *testing.T) {
		is := oauthtest.New(t, "")
		is.Metadata["issuer"] = "https://evil.example"
		_, err := oauthmeta.DiscoverAuthorizationServer(context.Background(), is.Server.Client(), is.ID)
		if err == nil || !strings.Contains(err.Error(), "must be equal") {
			t.Errorf("%v", err)
		}
	})
	t.Run("no metadata anywhere names every URL tried", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		defer srv.Close()
		_, err := oauthmeta.DiscoverAuthorizationServer(context.Background(), srv.Client(), srv.URL)
		if err == nil || !strings.Contains(err.Error(), `oauth-authorization-server" (404)`) || !strings.Contains(err.Error(), `openid-configuration" (404)`) {
			t.Errorf("%v", err)
		}
	})
	t.Run("only https, or http on loopback", func(t *testing.T) {
		for u, ok := range map[string]bool{"https://as.example": true, "http://127.0.0.1:9": true, "http://localhost:9": true,
			"http://as.example": false, "ftp://as.example": false, "as.example": false} {
			if err := oauthmeta.CheckFetchURL(u); (err == nil) != ok {
				t.Errorf("%s: %v", u, err)
			}
		}
	})
}
