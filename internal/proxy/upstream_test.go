// upstream_test.go pins the upstream session's contract on every transport
// (Streamable HTTP, legacy SSE, a stdio child): the server's bytes come
// back untouched, ping is answered and other server requests refused,
// notifications reach every subscriber.

package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestResultsAndErrorsAreRelayedByteForByte(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			ctx := testCtx(t)
			u := newUpstream(t, tr.config(t))
			want := func(s string) string {
				if tr.compacted {
					return compact(t, s)
				}
				return s
			}

			res := call(t, ctx, u, "fidelity", "{}")
			if string(res) != want(fidelityResult) {
				t.Errorf("result bytes changed:\n got %s\nwant %s", res, want(fidelityResult))
			}

			res, rpcErr, err := u.Exchange(ctx, "tools/call", json.RawMessage(`{"name":"custom_error"}`))
			if err != nil || res != nil || rpcErr == nil {
				t.Fatalf("custom_error: result %s, rpc error %v, err %v", res, rpcErr, err)
			}
			if string(rpcErr.Raw()) != want(fidelityError) {
				t.Errorf("error bytes changed:\n got %s\nwant %s", rpcErr.Raw(), want(fidelityError))
			}

			for _, c := range []struct {
				method, params string
				code           int64
			}{
				{"tools/call", `{"name":"no_such_tool"}`, jsonrpc.CodeInvalidParams},
				{"no/such/method", `{}`, jsonrpc.CodeMethodNotFound},
			} {
				_, rpcErr, err := u.Exchange(ctx, c.method, json.RawMessage(c.params))
				if err != nil || rpcErr == nil || rpcErr.Code != c.code {
					t.Errorf("%s %s: rpc error %v, err %v; want code %d", c.method, c.params, rpcErr, err, c.code)
				}
			}
		})
	}
}

func TestNullParamsAreSentAsNone(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			ctx := testCtx(t)
			u := newUpstream(t, tr.config(t))
			for _, params := range []string{"null", ""} {
				res, rpcErr, err := u.Exchange(ctx, "tools/list", json.RawMessage(params))
				if err != nil || rpcErr != nil || !strings.Contains(string(res), `"test_simple_text"`) {
					t.Errorf("tools/list with params %q: %s, %v, %v", params, res, rpcErr, err)
				}
			}
		})
	}
}

func TestPingIsAnsweredAndOtherServerRequestsRefused(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			ctx := testCtx(t)
			u := newUpstream(t, tr.config(t))
			got := toolText(t, call(t, ctx, u, "ask_client", "{}"))
			if want := "ping => {}; sampling/createMessage => error -32601"; got != want {
				t.Errorf("the server heard %q, want %q", got, want)
			}
		})
	}
}

// notification is the part of a relayed notification the tests check.
type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  struct {
		Data struct {
			Seq int `json:"seq"`
		} `json:"data"`
	} `json:"params"`
}

func seqOf(t *testing.T, msg json.RawMessage) int {
	t.Helper()
	var n notification
	if err := json.Unmarshal(msg, &n); err != nil || n.JSONRPC != "2.0" || n.Method != "notifications/message" {
		t.Fatalf("not the whole notification message: %s (%v)", msg, err)
	}
	return n.Params.Data.Seq
}

// buffered takes what is in ch now, without waiting.
func buffered(ch <-chan json.RawMessage) []json.RawMessage {
	var out []json.RawMessage
	for {
		select {
		case m := <-ch:
			out = append(out, m)
		default:
			return out
		}
	}
}

func TestNotificationsFanOutToEverySubscriber(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			ctx := testCtx(t)
			u := newUpstream(t, tr.config(t))
			var subs []<-chan json.RawMessage
			for range 3 {
				ch, cancel := u.Subscribe()
				defer cancel()
				subs = append(subs, ch)
			}
			call(t, ctx, u, "notify", `{"count":5}`)
			// The notifications rode ahead of the result: they are here.
			var first []json.RawMessage
			for i, ch := range subs {
				got := buffered(ch)
				if len(got) != 5 {
					t.Fatalf("subscriber %d got %d notifications, want 5", i, len(got))
				}
				for j, m := range got {
					if seq := seqOf(t, m); seq != j+1 {
						t.Errorf("subscriber %d: notification %d has seq %d", i, j, seq)
					}
					if first != nil && !bytes.Equal(m, first[j]) {
						t.Errorf("subscriber %d got other bytes: %s vs %s", i, m, first[j])
					}
				}
				first = got
			}
		})
	}
}

func TestAStalledSubscriberBlocksNeitherTheOthersNorTheUpstream(t *testing.T) {
	ctx := testCtx(t)
	cfg := transports[0].config(t)
	cfg.NotificationBuffer = 4
	u := newUpstream(t, cfg)

	stalled, cancelStalled := u.Subscribe()
	defer cancelStalled()
	late, cancelLate := u.Subscribe()
	defer cancelLate()
	reader, cancelReader := u.Subscribe()
	defer cancelReader()
	sawLast := make(chan []int)
	go func() {
		var seqs []int
		for m := range reader {
			var n notification
			_ = json.Unmarshal(m, &n)
			if seqs = append(seqs, n.Params.Data.Seq); n.Params.Data.Seq == 10 {
				sawLast <- seqs
				return
			}
		}
	}()

	call(t, ctx, u, "notify", `{"count":10}`) // returns: the reader upstream was not blocked

	select {
	case seqs := <-sawLast:
		for i := 1; i < len(seqs); i++ {
			if seqs[i] <= seqs[i-1] {
				t.Errorf("the reading subscriber got %v, out of order", seqs)
			}
		}
	case <-ctx.Done():
		t.Fatal("the reading subscriber never got the last notification")
	}
	for name, ch := range map[string]<-chan json.RawMessage{"stalled": stalled, "late": late} {
		var seqs []int
		for _, m := range buffered(ch) {
			seqs = append(seqs, seqOf(t, m))
		}
		if want := []int{7, 8, 9, 10}; !equalInts(seqs, want) {
			t.Errorf("%s subscriber kept %v, want the newest %v", name, seqs, want)
		}
	}
	if d := u.DroppedNotifications(); d < 12 {
		t.Errorf("DroppedNotifications = %d, want at least 12", d)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCloseEndsStreamsAndExchanges(t *testing.T) {
	ctx := testCtx(t)
	u := newUpstream(t, transports[0].config(t))
	ch, cancel := u.Subscribe()
	defer cancel()
	call(t, ctx, u, "test_simple_text", "{}")
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-ch; ok {
		t.Error("a notification stream stayed open after Close")
	}
	if _, _, err := u.Exchange(ctx, "tools/list", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Exchange after Close: %v, want ErrClosed", err)
	}
	if ch, _ := u.Subscribe(); ch != nil {
		if _, ok := <-ch; ok {
			t.Error("Subscribe after Close gave an open stream")
		}
	}
}
