// tokens_test.go pins what a service token looks like and what is kept of
// it: a recognisable, high-entropy secret shown once, and only its hash.

package auth_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth"
)

var (
	secretShape = regexp.MustCompile(`^mcpg_[A-Za-z0-9_-]{43}$`)
	idShape     = regexp.MustCompile(`^tok_[a-z2-7]{12}$`)
)

func TestNewTokenHasTheDocumentedShape(t *testing.T) {
	created := time.Date(2030, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	expires := created.Add(24 * time.Hour)
	seen := map[string]bool{}
	for range 100 {
		secret, rec, err := auth.NewToken("ci", "editor", expires, created)
		if err != nil {
			t.Fatal(err)
		}
		if !secretShape.MatchString(secret) {
			t.Fatalf("secret %q: want mcpg_ and 43 base64url characters", secret)
		}
		if !idShape.MatchString(rec.ID) {
			t.Fatalf("id %q: want tok_ and 12 base32 characters", rec.ID)
		}
		if h := sha256.Sum256([]byte(secret)); !bytes.Equal(rec.Hash, h[:]) {
			t.Fatal("hash is not the SHA-256 of the whole secret")
		}
		if rec.Name != "ci" || rec.Role != "editor" || !rec.CreatedAt.Equal(created) || !rec.ExpiresAt.Equal(expires) ||
			rec.CreatedAt.Location() != time.UTC || rec.ExpiresAt.Location() != time.UTC || !rec.RevokedAt.IsZero() {
			t.Fatalf("record %+v", rec)
		}
		if seen[secret] || seen[rec.ID] {
			t.Fatal("a secret or id repeated")
		}
		seen[secret], seen[rec.ID] = true, true
	}
}

func TestNewTokenWithoutExpiryNeverExpires(t *testing.T) {
	_, rec, err := auth.NewToken("ci", "viewer", time.Time{}, now)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.ExpiresAt.IsZero() || !rec.Active(now.AddDate(100, 0, 0)) {
		t.Fatalf("record %+v expires", rec)
	}
}

func TestNewTokenRefuses(t *testing.T) {
	for _, c := range []struct {
		rule       string
		name, role string
		expires    time.Time
	}{
		{"a token needs a name", "", "viewer", time.Time{}},
		{"a token needs a role", "ci", " ", time.Time{}},
		{"a name with a NUL, which PostgreSQL cannot hold", "ci\x00", "viewer", time.Time{}},
		{"a name with a line break, which would forge a log line", "ci\nadmin", "viewer", time.Time{}},
		{"a name not UTF-8", "ci\xff", "viewer", time.Time{}},
		{"an expiry in the past", "ci", "viewer", now.Add(-time.Second)},
		{"an expiry of now", "ci", "viewer", now},
	} {
		t.Run(c.rule, func(t *testing.T) {
			if _, _, err := auth.NewToken(c.name, c.role, c.expires, now); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

// The store is given the hash and nothing from which the secret could be
// read back.
func TestCreateStoresTheHashNotTheSecret(t *testing.T) {
	src := &fakeSource{}
	tokens := auth.NewTokens(src, nil)
	secret, rec, err := tokens.Create(context.Background(), "deploy-bot", "admin", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	stored := src.snapshot()
	if len(stored) != 1 || stored[0].ID != rec.ID {
		t.Fatalf("stored %+v", stored)
	}
	random := strings.TrimPrefix(secret, auth.TokenPrefix)
	for _, s := range stored {
		dump := fmt.Sprintf("%#v %+v %s", s, s, s.Hash)
		for _, needle := range []string{secret, random, random[:16], random[len(random)-16:]} {
			if strings.Contains(dump, needle) || bytes.Contains(s.Hash, []byte(needle)) {
				t.Fatalf("stored record holds (part of) the secret: %s", dump)
			}
		}
		if h := sha256.Sum256([]byte(secret)); !bytes.Equal(s.Hash, h[:]) {
			t.Fatal("stored hash is not SHA-256 of the secret")
		}
	}
}
