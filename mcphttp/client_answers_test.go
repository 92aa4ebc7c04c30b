// client_answers_test.go pins which requests a JSON answer leaves
// unanswered (they get a transport error), on the one-request fast path
// and on the general one alike.

package mcphttp

import (
	"reflect"
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
			got, ok := unansweredBy([]byte(c.data), c.ids)
			if ok != c.wantOK || len(got) != len(c.want) || (len(got) > 0 && !reflect.DeepEqual(got, c.want)) {
				t.Errorf("unansweredBy(%s) = %s, %v; want %s, %v", c.data, got, ok, c.want, c.wantOK)
			}
		})
	}
}
