package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/store"
)

// A definition's text comes from a backend: a stray byte in a
// description is pinned, and its change kept pending, on every store, the
// byte read back as U+FFFD (the fingerprint is the gateway's, of the bytes
// as listed).
func testPinsKeepADefinitionWithBytesNotUTF8(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	at := time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC)
	for i, fp := range []string{"v1", "v2"} {
		def := json.RawMessage("{\"name\":\"search\",\"description\":\"" + fp + " \xff\"}")
		pins, _, err := s.SightPins(ctx, "gh", []store.Sighting{{Kind: "tool", Name: "search", Fingerprint: fp, Definition: def}}, at)
		if err != nil || len(pins) != 1 {
			t.Fatalf("sighting %s: %+v %v", fp, pins, err)
		}
		p, err := s.PinOf(ctx, "gh", "tool", "search")
		if err != nil {
			t.Fatal(err)
		}
		want := "{\"name\":\"search\",\"description\":\"v1 \uFFFD\"}"
		if got := string(p.Definition); got != want || i == 1 && string(p.PendingDefinition) != "{\"name\":\"search\",\"description\":\"v2 \uFFFD\"}" {
			t.Fatalf("after %s: definition %q, pending %q", fp, got, p.PendingDefinition)
		}
	}
}

// A pin's life: pinned at first sight, a change pending (said once),
// approved only as the change it names, a later change rejected and no
// longer pending; each backend's pins its own.
func testPinsFirstSightChangeApproveReject(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	at := time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC)
	see := func(backend, fp string, minutes int) (store.Pin, bool) {
		t.Helper()
		pins, fresh, err := s.SightPins(ctx, backend, []store.Sighting{{Kind: "tool", Name: "search", Fingerprint: fp,
			Definition: json.RawMessage(`{"name":"search","description":"` + fp + `"}`)}}, at.Add(time.Duration(minutes)*time.Minute))
		if err != nil || len(pins) != 1 || len(fresh) != 1 {
			t.Fatalf("SightPins: %v %v %v", pins, fresh, err)
		}
		return pins[0], fresh[0]
	}
	if p, fresh := see("gh", "v1", 0); p.Fingerprint != "v1" || p.ApprovedBy != store.FirstSight || !p.ApprovedAt.Equal(at) || p.Pending != "" || fresh {
		t.Fatalf("first sight: %+v fresh=%v", p, fresh)
	}
	if p, fresh := see("gh", "v1", 1); p.Pending != "" || fresh {
		t.Fatalf("the same again: %+v fresh=%v", p, fresh)
	}
	if p, fresh := see("gh", "v2", 2); p.Fingerprint != "v1" || p.Pending != "v2" || !fresh || string(p.PendingDefinition) != `{"name":"search","description":"v2"}` {
		t.Fatalf("a change: %+v fresh=%v", p, fresh)
	}
	if p, fresh := see("gh", "v2", 3); p.Pending != "v2" || fresh || !p.PendingSince.Equal(at.Add(2*time.Minute)) {
		t.Fatalf("the change again: %+v fresh=%v (said once, pending since it was first seen)", p, fresh)
	}
	if p, _ := see("other", "v9", 0); p.Fingerprint != "v9" || p.Pending != "" {
		t.Fatalf("another backend's pin: %+v", p)
	}
	// An entry a backend lists twice is seen once.
	twice := []store.Sighting{{Kind: "prompt", Name: "p", Fingerprint: "a", Definition: json.RawMessage(`{}`)},
		{Kind: "prompt", Name: "p", Fingerprint: "a", Definition: json.RawMessage(`{}`)}}
	if pins, _, err := s.SightPins(ctx, "twice", twice, at); err != nil || len(pins) != 2 || pins[1].Fingerprint != "a" {
		t.Fatalf("an entry listed twice: %+v %v", pins, err)
	}
	if p, err := s.PinOf(ctx, "gh", "tool", "search"); err != nil || p.Pending != "v2" || p.Fingerprint != "v1" {
		t.Fatalf("PinOf: %+v %v", p, err)
	}
	if _, err := s.PinOf(ctx, "gh", "tool", "never"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("PinOf an entry never seen: %v, want ErrNotFound", err)
	}
	pending, err := s.PendingPins(ctx)
	if err != nil || len(pending) != 1 || pending[0].Backend != "gh" || pending[0].Pending != "v2" {
		t.Fatalf("PendingPins: %+v %v", pending, err)
	}
	if err := s.ApprovePin(ctx, "gh", "tool", "search", "v3", "alice", at); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("approving a change that is not the pending one: %v, want ErrNotFound", err)
	}
	if err := s.ApprovePin(ctx, "gh", "tool", "search", "v2", "alice", at.Add(4*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if p, fresh := see("gh", "v2", 5); p.Fingerprint != "v2" || p.ApprovedBy != "alice" || p.Pending != "" || fresh ||
		string(p.Definition) != `{"name":"search","description":"v2"}` {
		t.Fatalf("after approval: %+v", p)
	}
	see("gh", "v3", 6)
	if err := s.RejectPin(ctx, "gh", "tool", "search", "v3"); err != nil {
		t.Fatal(err)
	}
	if p, fresh := see("gh", "v3", 7); p.Fingerprint != "v2" || p.Rejected != "v3" || p.Pending != "" || fresh {
		t.Fatalf("after rejection: %+v fresh=%v (held, not pending again)", p, fresh)
	}
	if pending, _ := s.PendingPins(ctx); len(pending) != 0 {
		t.Fatalf("pending after rejection: %+v", pending)
	}
	if err := s.RejectPin(ctx, "gh", "tool", "search", "v3"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("rejecting what is not pending: %v", err)
	}
}

// Replicas that see an entry for the first time at once pin it once: none
// fails, and all agree on the fingerprint pinned.
func testPinsFirstSightByReplicasAtOnce(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	const replicas = 4
	got := make([]store.Pin, replicas)
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Go(func() {
			fp := "fp" + strconv.Itoa(i%2) // two of them saw another definition
			var pins []store.Pin
			pins, _, errs[i] = s.SightPins(ctx, "gh", []store.Sighting{{Kind: "tool", Name: "t", Fingerprint: fp, Definition: json.RawMessage(`{}`)}}, time.Now())
			if len(pins) == 1 {
				got[i] = pins[0]
			}
		})
	}
	wg.Wait()
	for i := range replicas {
		if errs[i] != nil {
			t.Fatalf("replica %d: %v", i, errs[i])
		}
		if got[i].Fingerprint != got[0].Fingerprint {
			t.Fatalf("replicas pinned different fingerprints: %q and %q", got[0].Fingerprint, got[i].Fingerprint)
		}
	}
}
