// client_answers_test.go pins which requests a JSON answer leaves
// unanswered (they get a transport error), for one request and a batch
// alike, and that every message of the answer reaches Read parsed.

package mcphttp

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

func TestUnansweredByNamesEveryRequestTheAnswerDoesNotAnswer(t *testing.T) {
	one := []jsonrpc.ID{jsonrpc.ID(`7`)}
	two := []jsonrpc.ID{jsonrpc.ID(`7`), jsonrpc.ID(`"x"`)}
	cases := []struct {
		name   string
		data   string
		ids    []jsonrpc.ID
		want   []jsonrpc.ID
		wantOK bool
	}{
		{"the result of the one request answers it", `{"jsonrpc":"2.0","id":7,"result":{}}`, one, nil, true},
		{"an error for the one request answers it", `{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"m"}}`, one, nil, true},
		{"an answer to another id leaves the request unanswered", `{"jsonrpc":"2.0","id":8,"result":{}}`, one, one, true},
		{"a string id is not the number of the same digits", `{"jsonrpc":"2.0","id":"7","result":{}}`, one, one, true},
		{"a notification answers nothing", `{"jsonrpc":"2.0","method":"notifications/message"}`, one, one, true},
		{"a request from the server answers nothing", `{"jsonrpc":"2.0","id":7,"method":"ping"}`, one, one, true},
		{"what is not JSON-RPC is refused", `{"id":7}`, one, nil, false},
		{"what is not JSON is refused", `nope`, one, nil, false},
		{"a batch answering one of two leaves the other", `[{"jsonrpc":"2.0","id":7,"result":{}}]`, two, two[1:], true},
		{"a batch answering both leaves none", `[{"jsonrpc":"2.0","id":"x","result":{}},{"jsonrpc":"2.0","id":7,"result":{}}]`, two, nil, true},
		{"a batch answering the one request", `[{"jsonrpc":"2.0","id":7,"result":{}}]`, one, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn, err := DialStreamable(context.Background(), "http://127.0.0.1:1/mcp", ClientOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.deliverJSON(outgoing{requests: c.ids}, []byte(c.data))
			var failed []jsonrpc.ID
			delivered := 0
			for {
				ctx, cancel := context.WithCancel(context.Background())
				cancel() // only what is queued
				m, err := conn.inbox.pop(ctx)
				if err != nil {
					break
				}
				if e, _ := m.ErrorObject(); e != nil && strings.HasPrefix(e.Message, "transport error") {
					failed = append(failed, m.ID)
				} else {
					delivered++
				}
			}
			if c.wantOK && delivered == 0 {
				t.Errorf("nothing of %s reached Read", c.data)
			}
			want := c.want
			if !c.wantOK {
				want = c.ids // not JSON-RPC: every request fails
			}
			if len(failed) != len(want) {
				t.Fatalf("failed %s, want %s", failed, want)
			}
			for i := range want {
				if string(failed[i]) != string(want[i]) {
					t.Errorf("failed %s, want %s", failed, want)
				}
			}
		})
	}
}
