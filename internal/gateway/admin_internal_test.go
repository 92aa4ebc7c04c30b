package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth/oauthclient"
)

// The console's line for a backend's authorization says what the admin
// must know: the link and until when, the failure, or where it is
// authorized, for what, and whether the token is bound by DPoP.
func TestTheConsoleSaysABackendsAuthorization(t *testing.T) {
	until := time.Date(2026, 12, 2, 17, 5, 0, 0, time.UTC)
	for _, c := range []struct {
		rule string
		st   oauthclient.AuthorizationStatus
		want []string
		link string
	}{
		{"a link waiting", oauthclient.AuthorizationStatus{Link: "https://as.example/authorize?x", Expires: until}, []string{"waiting for an admin", "17:05 UTC"}, "https://as.example/authorize?x"},
		{"a failure", oauthclient.AuthorizationStatus{Failure: "the token endpoint answered 400"}, []string{"OAuth: the token endpoint answered 400"}, ""},
		{"a bearer token", oauthclient.AuthorizationStatus{Authorized: true, Issuer: "https://as.example", Scope: "read"}, []string{`authorized at "https://as.example" for read.`}, ""},
		{"a DPoP-bound token", oauthclient.AuthorizationStatus{Authorized: true, Issuer: "https://as.example", DPoP: true}, []string{`authorized at "https://as.example"`, "bound to the gateway's key (DPoP)"}, ""},
	} {
		t.Run(c.rule, func(t *testing.T) {
			line, link := oauthSummary(c.st)
			for _, w := range c.want {
				if !strings.Contains(line, w) {
					t.Errorf("%q lacks %q", line, w)
				}
			}
			if link != c.link || (!c.st.DPoP && strings.Contains(line, "DPoP")) {
				t.Errorf("%q, link %q", line, link)
			}
		})
	}
}
