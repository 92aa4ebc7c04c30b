package catalogue_test

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
)

// readsFrom polls (bounded) until the front reads mem://a and
// mem://items/1 from the backend labelled want: a takeover by a backend
// that waited runs on a goroutine of its own.
func readsFrom(t *testing.T, f *front, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := f.call(t, "resources/read", `{"uri":"mem://a"}`)
		if bytes.Contains(res.Result, []byte(`"`+want+` a"`)) && len(f.list(t, "resources/templates/list", "resourceTemplates")) == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("mem://a reads %s %s, want %s's", res.Result, res.Error, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A URI several backends list is served by the one that comes first in
// the configuration, whichever came up first; when the owner lets it go,
// the next in order takes over at once (no Sync of its own needed).
func TestSharedURIsFollowTheConfigurationOrder(t *testing.T) {
	claims := catalogue.NewClaims()
	claims.SetOrder([]string{"first", "second", "third"})
	f := newFront(t)
	backend := func(name string) *catalogue.Mirror {
		return catalogue.New(name, connect(t, newBackendServer(t, name, 0).Server), catalogue.Options{Claims: claims})
	}
	third, second, first := backend("third"), backend("second"), backend("first")

	must(t, third.Sync(ctx, f.Server)) // up first, last in order
	readsFrom(t, f, "third")
	must(t, second.Sync(ctx, f.Server))
	readsFrom(t, f, "second") // taken over: it comes earlier
	must(t, first.Sync(ctx, f.Server))
	readsFrom(t, f, "first")
	if got := f.list(t, "resources/list", "resources"); len(got) != 1 {
		t.Fatalf("front resources %s, want one", got)
	}

	first.Unsync(f.Server) // removed by a reload
	readsFrom(t, f, "second")
	second.Down(f.Server) // its connection ended
	readsFrom(t, f, "third")

	// A later Sync of a backend that waits changes nothing; one earlier
	// in order takes the URI back.
	must(t, third.Sync(ctx, f.Server))
	readsFrom(t, f, "third")
	first = backend("first")
	must(t, first.Sync(ctx, f.Server))
	readsFrom(t, f, "first")

	// Gone for good, nobody waiting: the URI leaves the front.
	first.Unsync(f.Server)
	readsFrom(t, f, "third")
	third.Unsync(f.Server)
	if got := f.list(t, "resources/list", "resources"); len(got) != 0 {
		t.Errorf("front resources %s after every backend left", got)
	}
}

// Backends sharing a URI may all go at once (a reload removing them, their
// connections ending together): each release hands the URI on to the next
// while the next may be releasing it too. Run under -race, this failed
// while a release returned the shared claim instead of a copy of it.
func TestSharedURIsReleasedTogetherLeaveNoRace(t *testing.T) {
	for range 10 {
		claims := catalogue.NewClaims()
		claims.SetOrder([]string{"first", "second", "third"})
		f := newFront(t)
		var bs []*catalogue.Mirror
		for _, name := range []string{"first", "second", "third"} {
			b := catalogue.New(name, connect(t, newBackendServer(t, name, 0).Server), catalogue.Options{Claims: claims})
			must(t, b.Sync(ctx, f.Server))
			bs = append(bs, b)
		}
		readsFrom(t, f, "first")
		var wg sync.WaitGroup
		for _, b := range bs {
			wg.Go(func() { b.Unsync(f.Server) })
		}
		wg.Wait()
		deadline := time.Now().Add(10 * time.Second)
		for len(f.list(t, "resources/list", "resources")) != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("front resources %s after every backend left", f.list(t, "resources/list", "resources"))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
