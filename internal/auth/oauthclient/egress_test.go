// egress_test.go pins that every fetch the backend OAuth client makes on
// the word of a backend or its authorization server goes out under the
// outbound policy (internal/egress): resource metadata, authorization
// server metadata, registration, the token endpoint (authorization code
// and client credentials). The backend is on 127.0.0.1, whose own origin
// is reached; what it points to is 127.0.0.2, a stand-in for the cloud's
// metadata service that fails the test if it is ever reached.

package oauthclient_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/auth/oauthclient"
	"github.com/mcpgate/mcpgate/internal/egress/egresstest"
)

// hostile is a value a backend serves that must never be echoed whole.
const hostile = "<script>alert(1)</script>\nforged: log line"

func TestEveryFetchOnABackendsWordIsUnderTheOutboundPolicy(t *testing.T) {
	target, reached := egresstest.Forbidden(t)
	for _, tc := range []struct {
		name string
		// serve answers the backend's own origin's paths; base is it.
		serve func(w http.ResponseWriter, r *http.Request, base string)
		want  string // in the failure
	}{
		{"resource metadata redirects to a refused address", func(w http.ResponseWriter, r *http.Request, _ string) {
			if r.URL.Path == "/prm" {
				http.Redirect(w, r, target+"/latest/meta-data/", http.StatusFound)
			}
		}, "no resource metadata"},
		{"resource metadata larger than the limit", func(w http.ResponseWriter, r *http.Request, base string) {
			if r.URL.Path == "/prm" {
				fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q],"pad":"%s"}`, base+"/mcp", base, strings.Repeat("x", 2<<20))
			}
		}, "larger than the limit"},
		{"the authorization server is at a refused address", func(w http.ResponseWriter, r *http.Request, base string) {
			if r.URL.Path == "/prm" {
				fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, base+"/mcp", target)
			}
		}, "not a public one"},
		{"the registration endpoint is at a refused address", func(w http.ResponseWriter, r *http.Request, base string) {
			switch r.URL.Path {
			case "/prm":
				fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, base+"/mcp", base)
			case "/.well-known/oauth-authorization-server":
				fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,"registration_endpoint":%q,"code_challenge_methods_supported":["S256"]}`,
					base, base+"/authorize", base+"/token", target+"/register")
			}
		}, "not a public one"},
		{"a hostile resource value is not echoed", func(w http.ResponseWriter, r *http.Request, _ string) {
			if r.URL.Path == "/prm" {
				fmt.Fprintf(w, `{"resource":%q}`, hostile+strings.Repeat("y", 4096))
			}
		}, `\u003cscript\u003e`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var srv *httptest.Server
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/mcp" {
					w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+`/prm"`)
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				tc.serve(w, r, srv.URL)
			}))
			t.Cleanup(srv.Close)
			logs := &strings.Builder{}
			a := &oauthclient.Authorization{Backend: "b", Resource: srv.URL + "/mcp", Env: &oauthclient.ClientEnv{
				RedirectURL: func() string { return "http://127.0.0.1:1/oauth/callback" }, Vault: &oauthclient.MemoryVault{},
				Logger: slog.New(slog.NewTextHandler(logs, nil))}}
			get(t, a, srv.URL+"/mcp")
			st := a.Status(context.Background())
			if st.Link != "" || !strings.Contains(st.Failure, tc.want) {
				t.Errorf("status %+v, want no link and a failure naming %q", st, tc.want)
			}
			for what, text := range map[string]string{"failure": st.Failure, "log": logs.String()} {
				if strings.Contains(text, "<script>") || strings.Contains(text, "\nforged") || strings.Contains(text, "instance credentials") ||
					len(text) > 2048 {
					t.Errorf("the %s echoes what was fetched (%d bytes): %.300s", what, len(text), text)
				}
			}
		})
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the refused address was reached %d times", n)
	}
}

// A client credentials backend's discovered token endpoint at a refused
// address is never sent the secret.
func TestClientCredentialsNeverSendTheSecretToARefusedAddress(t *testing.T) {
	target, reached := egresstest.Forbidden(t)
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource":
			fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, srv.URL+"/mcp", srv.URL)
		case "/.well-known/oauth-authorization-server":
			fmt.Fprintf(w, `{"issuer":%q,"token_endpoint":%q}`, srv.URL, target+"/token")
		default:
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	t.Cleanup(srv.Close)
	cc := oauthclient.ClientCredentials{ClientID: "gw", ClientSecret: "s3cret"}
	_, err := cc.Client(srv.Client(), srv.URL+"/mcp").Post(srv.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("the request: %v, want a refusal naming no secret", err)
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the refused token endpoint was reached %d times", n)
	}
}
