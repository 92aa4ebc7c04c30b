package oauthclient_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgate/mcpgate/internal/auth/oauthclient"
)

// The token exchange's request, as a token endpoint sees it: RFC 8693's
// parameters. The gateway authenticates by its secret in the header, by a
// JWT it signs for the endpoint (private_key_jwt), or by its workload's
// own JWT (a client assertion). A refusal's error names the server's code
// and never the subject token.
func TestTheTokenExchangeRequest(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	var mu sync.Mutex
	var forms []url.Values
	var basic []string
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		id, secret, _ := r.BasicAuth()
		mu.Lock()
		forms, basic = append(forms, r.PostForm), append(basic, id+":"+secret)
		mu.Unlock()
		if a := r.PostForm.Get("client_assertion"); a != "" && a != "the-workloads-jwt" {
			var c jwt.RegisteredClaims
			if _, err := jwt.ParseWithClaims(a, &c, func(*jwt.Token) (any, error) { return &key.PublicKey, nil },
				jwt.WithAudience(srv.URL+"/token"), jwt.WithIssuer("gw"), jwt.WithSubject("gw")); err != nil {
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(`{"error":"invalid_client"}`))
				return
			}
		}
		if r.PostForm.Get("subject_token") == "refuse-me" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"invalid_grant","error_description":"bad subject refuse-me"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "exchanged-" + r.PostForm.Get("subject_token"),
			"issued_token_type": oauthclient.TokenTypeAccess, "token_type": "Bearer", "expires_in": 60})
	}))
	t.Cleanup(srv.Close)
	x := oauthclient.TokenExchange{Client: oauthclient.ClientCredentials{ClientID: "gw", ClientSecret: "s3cret", TokenURL: srv.URL + "/token"},
		SubjectTokenType: oauthclient.TokenTypeJWT, Audience: "tickets-api", Resource: "https://tickets.example/mcp"}
	ctx := context.Background()
	got, err := x.Exchange(ctx, "alice-jwt")
	if err != nil || got.Token != "exchanged-alice-jwt" || got.Expires.IsZero() {
		t.Fatalf("by secret: %+v %v", got, err)
	}
	x.Client = oauthclient.ClientCredentials{ClientID: "gw", AuthMethod: oauthclient.PrivateKeyJWT, PrivateKey: key, TokenURL: srv.URL + "/token"}
	if got, err := x.Exchange(ctx, "bob-jwt"); err != nil || got.Token != "exchanged-bob-jwt" {
		t.Fatalf("by private_key_jwt: %+v %v", got, err)
	}
	x.Client = oauthclient.ClientCredentials{ClientID: "gw", TokenURL: srv.URL + "/token",
		Assertion: func() (string, error) { return "the-workloads-jwt", nil }}
	if got, err := x.Exchange(ctx, "carol-jwt"); err != nil || got.Token != "exchanged-carol-jwt" {
		t.Fatalf("by the workload's assertion: %+v %v", got, err)
	}
	_, err = x.Exchange(ctx, "refuse-me")
	if err == nil || !strings.Contains(err.Error(), "invalid_grant") || strings.Contains(err.Error(), "refuse-me") {
		t.Errorf("a refusal: %v, want invalid_grant and no subject token", err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string]string{"grant_type": oauthclient.TokenExchangeGrant, "subject_token_type": oauthclient.TokenTypeJWT,
		"audience": "tickets-api", "resource": "https://tickets.example/mcp"}
	for i, f := range forms {
		for k, v := range want {
			if f.Get(k) != v {
				t.Errorf("request %d: %s = %q, want %q", i, k, f.Get(k), v)
			}
		}
	}
	if basic[0] != "gw:s3cret" || forms[0].Has("client_assertion") {
		t.Errorf("by secret: basic %q, form %v", basic[0], forms[0])
	}
	if basic[1] != ":" || forms[1].Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" || forms[1].Has("client_secret") {
		t.Errorf("by private_key_jwt: basic %q, form %v", basic[1], forms[1])
	}
	if basic[2] != ":" || forms[2].Get("client_assertion") != "the-workloads-jwt" || forms[2].Has("client_secret") ||
		forms[2].Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
		t.Errorf("by the workload's assertion: basic %q, form %v", basic[2], forms[2])
	}
	if _, err := x.Exchange(ctx, ""); err == nil {
		t.Error("an empty subject token was sent")
	}
}
