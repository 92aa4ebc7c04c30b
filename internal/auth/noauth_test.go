// noauth_test.go pins the development mode: one identity for every
// request, and an address check that lets it run only where nobody else
// can connect.

package auth_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpgate/mcpgate/internal/auth"
	"github.com/mcpgate/mcpgate/mcp"
)

func TestNoAuthGivesEveryRequestTheConfiguredIdentity(t *testing.T) {
	dev := mcp.Identity{Subject: "developer", Role: "admin", TokenID: "noauth"}
	srv := httptest.NewServer(auth.NoAuth(dev)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := mcp.IdentityFrom(r.Context())
		json.NewEncoder(w).Encode(seen{Identity: id, HasIdentity: ok})
	})))
	defer srv.Close()
	for _, authorization := range []string{"", "Bearer whatever"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		if authorization != "" {
			req.Header.Set("Authorization", authorization)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var s seen
		err = json.NewDecoder(resp.Body).Decode(&s)
		resp.Body.Close()
		if err != nil || !s.HasIdentity || s.Identity != dev {
			t.Fatalf("Authorization %q: handler saw %+v (%v)", authorization, s, err)
		}
	}
}

func TestCheckLoopback(t *testing.T) {
	for _, c := range []struct {
		addr     string
		loopback bool
	}{
		{"127.0.0.1:0", true},
		{"127.0.0.1:8080", true},
		{"127.9.8.7:80", true},
		{"[::1]:80", true},
		{"localhost:1", true},
		{"LocalHost:1", true},
		{"0.0.0.0:80", false},
		{"[::]:80", false},
		{":80", false},
		{"10.0.0.1:80", false},
		{"192.168.1.10:80", false},
		{"[2001:db8::1]:80", false},
		{"example.com:80", false},
		{"localhost.example.com:80", false},
		{"127.0.0.1", false}, // no port: not a listen address
		{"", false},
	} {
		t.Run(c.addr, func(t *testing.T) {
			err := auth.CheckLoopback(c.addr)
			if c.loopback && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !c.loopback && err == nil {
				t.Fatal("accepted")
			}
		})
	}
	if err := auth.CheckLoopback("0.0.0.0:80"); !errors.Is(err, auth.ErrNotLoopback) {
		t.Fatalf("err %v, want ErrNotLoopback", err)
	}
}

// With authentication off, a bearer token a request carries is kept as
// presented (unchecked), for a per_user backend whose identity provider
// checks it by exchange; without one there is none.
func TestNoAuthKeepsTheBearerAsPresented(t *testing.T) {
	var got []string
	h := auth.NoAuth(mcp.Identity{Subject: "developer", Role: "admin"})(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		id, _ := mcp.IdentityFrom(r.Context())
		got = append(got, id.Presented.Reveal())
	}))
	for _, authorization := range []string{"Bearer eyJ.id-token", ""} {
		req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		if authorization != "" {
			req.Header.Set("Authorization", authorization)
		}
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	if len(got) != 2 || got[0] != "eyJ.id-token" || got[1] != "" {
		t.Errorf("presented: %q", got)
	}
}
