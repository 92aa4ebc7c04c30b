// sealed_test.go pins sealed session ids (sealed.go): a session opened on
// one replica is resumed by another holding the key, with its revision,
// capabilities and client info; it stays its owner's; a tampered id, a
// key no longer accepted, an id past its age or ended by DELETE here is an
// unknown session; a rotated key still opens ids sealed before; state too
// large to seal leaves the session on its replica.

package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/mcp"
)

func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, SessionKeySize) }

func testSealer(t testing.TB, key, previous []byte) *Sealer {
	t.Helper()
	s, err := NewSealer(key, previous)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// replicaServer is one replica's engine: a tool that says what the
// session it runs in knows of its client.
func replicaServer(t *testing.T, name string) *mcp.Server {
	t.Helper()
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: name, Version: "0"}})
	err := s.AddTools(&mcp.Tool{Name: "session", Handler: func(_ context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
		out, _ := json.Marshal(map[string]any{"replica": name, "version": r.Session.Version(),
			"caps": r.Session.ClientCapabilities(), "info": r.Session.ClientInfo(), "subject": r.Session.Identity().Subject})
		return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(string(out))}})
	}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type sessionSeen struct {
	Replica, Version, Subject string
	Caps, Info                json.RawMessage
}

func (e *stEnv) sessionSeen(sid, who string) (int, sessionSeen) {
	e.t.Helper()
	r := e.post(sid, stCallBody(7, "session", `{}`), "X-Test-Identity", who, "Mcp-Protocol-Version", mcp.Version20251125)
	var seen sessionSeen
	if r.status == http.StatusOK {
		if err := json.Unmarshal([]byte(stText(e.t, stMessage(e.t, r.body))), &seen); err != nil {
			e.t.Fatal(err)
		}
	}
	return r.status, seen
}

func TestSealedSessionIsResumedByAnotherReplica(t *testing.T) {
	testkit.LeakCheck(t)
	key := testKey(1)
	a := newStEnv(t, replicaServer(t, "a"), Options{Sealer: testSealer(t, key, nil)})
	b := newStEnv(t, replicaServer(t, "b"), Options{Sealer: testSealer(t, key, nil)})
	sid := a.initialize("alice", mcp.Version20251125)
	if !strings.HasPrefix(sid, sealedPrefix) || strings.Contains(sid, "alice") {
		t.Fatalf("session id %q is not sealed", sid)
	}
	for _, e := range []*stEnv{b, a, b} {
		status, seen := e.sessionSeen(sid, "alice")
		if status != http.StatusOK {
			t.Fatalf("call on the other replica = %d", status)
		}
		if seen.Version != mcp.Version20251125 || seen.Subject != "alice" ||
			string(seen.Caps) != `{"sampling":{}}` || string(seen.Info) != `{"name":"st","version":"1"}` {
			t.Errorf("replica %s rebuilt %+v", seen.Replica, seen)
		}
	}
	if b.h.Sessions() != 1 {
		t.Errorf("replica b holds %d sessions after two calls, want 1", b.h.Sessions())
	}
	// Another identity presenting the id is told it is unknown, on both.
	for _, e := range []*stEnv{a, b} {
		if status, _ := e.sessionSeen(sid, "mallory"); status != http.StatusNotFound {
			t.Errorf("another identity's call = %d, want 404", status)
		}
	}
	c := newStEnv(t, replicaServer(t, "c"), Options{Sealer: testSealer(t, key, nil)})
	if status, _ := c.sessionSeen(sid, "mallory"); status != http.StatusNotFound {
		t.Errorf("another identity's call on a fresh replica = %d, want 404", status)
	}
}

func TestSealedIDsThatDoNotOpenAreUnknownSessions(t *testing.T) {
	testkit.LeakCheck(t)
	a := newStEnv(t, replicaServer(t, "a"), Options{Sealer: testSealer(t, testKey(1), nil)})
	sid := a.initialize("alice", mcp.Version20251125)
	flipped := []byte(sid)
	flipped[len(flipped)/2] ^= 1
	for _, c := range []struct {
		rule string
		opts Options
		sid  string
	}{
		{"a tampered id", Options{Sealer: testSealer(t, testKey(1), nil)}, string(flipped)},
		{"an id sealed with a key not accepted", Options{Sealer: testSealer(t, testKey(2), nil)}, sid},
		{"an id past its age", Options{Sealer: testSealer(t, testKey(1), nil), SealedMaxAge: time.Nanosecond}, sid},
		{"a replica that seals nothing", Options{}, sid},
		{"an id too long to be ours", Options{Sealer: testSealer(t, testKey(1), nil)}, sealedPrefix + strings.Repeat("A", 4*maxSealedState)},
	} {
		t.Run(c.rule, func(t *testing.T) {
			e := newStEnv(t, replicaServer(t, "x"), c.opts)
			if status, _ := e.sessionSeen(c.sid, "alice"); status != http.StatusNotFound {
				t.Errorf("= %d, want 404", status)
			}
		})
	}
}

func TestSealedIDsOfThePreviousKeyStillOpen(t *testing.T) {
	testkit.LeakCheck(t)
	old, next := testKey(1), testKey(2)
	a := newStEnv(t, replicaServer(t, "a"), Options{Sealer: testSealer(t, old, nil)})
	rotated := newStEnv(t, replicaServer(t, "b"), Options{Sealer: testSealer(t, next, old)})
	before := a.initialize("alice", mcp.Version20250618)
	if status, seen := rotated.sessionSeen(before, "alice"); status != http.StatusOK || seen.Version != mcp.Version20250618 {
		t.Fatalf("an id of the previous key on a rotated replica = %d %+v", status, seen)
	}
	after := rotated.initialize("alice", mcp.Version20251125)
	if status, _ := a.sessionSeen(after, "alice"); status != http.StatusNotFound {
		t.Errorf("an id of the new key on a replica without it = %d, want 404", status)
	}
}

func TestDeletedSealedSessionIsNotResumedHere(t *testing.T) {
	testkit.LeakCheck(t)
	a := newStEnv(t, replicaServer(t, "a"), Options{Sealer: testSealer(t, testKey(1), nil)})
	sid := a.initialize("alice", mcp.Version20251125)
	if r := a.do(http.MethodDelete, stHeaders(sid, "X-Test-Identity", "alice"), ""); r.status != http.StatusOK {
		t.Fatalf("DELETE = %d", r.status)
	}
	if status, _ := a.sessionSeen(sid, "alice"); status != http.StatusNotFound {
		t.Errorf("a deleted session's id resumed on its own replica: %d", status)
	}
}

func TestSessionTooLargeToSealStaysOnItsReplica(t *testing.T) {
	testkit.LeakCheck(t)
	key := testKey(1)
	a := newStEnv(t, replicaServer(t, "a"), Options{Sealer: testSealer(t, key, nil)})
	b := newStEnv(t, replicaServer(t, "b"), Options{Sealer: testSealer(t, key, nil)})
	huge := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"x":"` +
		strings.Repeat("y", 2*maxSealedState) + `"},"clientInfo":{"name":"st","version":"1"}}}`
	r := a.post("", huge, "X-Test-Identity", "alice")
	sid := r.header.Get(HeaderSessionID)
	if r.status != http.StatusOK || sid == "" || strings.HasPrefix(sid, sealedPrefix) {
		t.Fatalf("initialize = %d, id %q", r.status, sid)
	}
	if status, _ := a.sessionSeen(sid, "alice"); status != http.StatusOK {
		t.Errorf("on its replica = %d", status)
	}
	if status, _ := b.sessionSeen(sid, "alice"); status != http.StatusNotFound {
		t.Errorf("on another = %d, want 404", status)
	}
}

func FuzzSealedID(f *testing.F) {
	s := testSealer(f, testKey(1), testKey(2))
	id, err := s.sealID(sealedState{SID: "abc", Owner: ownerHash("alice"), Version: mcp.Version20251125, Caps: json.RawMessage(`{}`), IssuedAt: 1})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(id)
	f.Add(sealedPrefix)
	f.Add(sealedPrefix + "AAAA")
	f.Add("0123456789abcdef0123456789abcdef")
	f.Fuzz(func(t *testing.T, in string) {
		st, err := s.openID(in)
		if err != nil {
			return
		}
		// Whatever opens was sealed by us: sealing it again and opening
		// that gives the same state.
		again, err := s.sealID(st)
		if err != nil {
			t.Fatal(err)
		}
		back, err := s.openID(again)
		if err != nil || back.SID != st.SID || back.Owner != st.Owner || back.Version != st.Version || !bytes.Equal(back.Caps, st.Caps) {
			t.Fatalf("round trip: %+v != %+v (%v)", back, st, err)
		}
	})
}
