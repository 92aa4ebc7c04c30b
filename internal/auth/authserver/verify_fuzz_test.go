package authserver_test

import (
	"context"
	"net/url"
	"testing"
	"time"
)

// Verify never panics on any string, and whatever it accepts is the
// token it issued: the same person, role and grant (base64's unused
// trailing bits aside, no other string passes).
func FuzzVerifyAcceptsOnlyWhatItIssued(f *testing.F) {
	r := newRig(f, nil)
	client, code := r.codeFor("editor")
	a := r.exchange(client, "http://127.0.0.1:9/cb", code)
	want, _, err := r.srv.Verify(context.Background(), a.AccessToken, time.Now())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(a.AccessToken)
	f.Add(a.RefreshToken)
	f.Add("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.")
	f.Add(url.QueryEscape(a.AccessToken))
	f.Fuzz(func(t *testing.T, token string) {
		id, _, err := r.srv.Verify(context.Background(), token, time.Now())
		if err == nil && id != want {
			t.Fatalf("accepted %q as %+v", token, id)
		}
	})
}
