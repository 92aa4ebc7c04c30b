package upstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/mcp"
)

// inputRequired is a 2026 server's answer asking for one elicitation.
const inputRequired = `{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"name?"}}},"requestState":"s1"}`

func TestAServerThatAsksForInputIsAnsweredAndAskedAgainABoundedNumberOfTimes(t *testing.T) {
	ctx := context.Background()
	answered := 0
	answer := func(_ context.Context, inputs []mcp.Input) ([]json.RawMessage, error) {
		answered++
		out := make([]json.RawMessage, len(inputs))
		for i := range inputs {
			out[i] = json.RawMessage(`{"action":"accept","content":{"name":"ada"}}`)
		}
		return out, nil
	}
	t.Run("the call is made again with the answers, until the server has what it asked for", func(t *testing.T) {
		calls := 0
		res, err := upstream.WithInput(ctx, json.RawMessage(`{"name":"greet"}`), func(_ context.Context, params json.RawMessage) (json.RawMessage, error) {
			calls++
			if calls == 1 {
				return json.RawMessage(inputRequired), nil
			}
			if !json.Valid(params) || string(params) == `{"name":"greet"}` {
				t.Errorf("the retry's params %s carry no answers", params)
			}
			return json.RawMessage(`{"content":[]}`), nil
		}, answer)
		if err != nil || string(res) != `{"content":[]}` || calls != 2 {
			t.Errorf("WithInput = %s, %v after %d calls; want the final answer after 2", res, err, calls)
		}
	})
	t.Run("a server that keeps asking gets ErrKeepsAsking", func(t *testing.T) {
		calls := 0
		_, err := upstream.WithInput(ctx, json.RawMessage(`{}`), func(context.Context, json.RawMessage) (json.RawMessage, error) {
			calls++
			return json.RawMessage(inputRequired), nil
		}, answer)
		if !errors.Is(err, upstream.ErrKeepsAsking) || calls != upstream.MaxInputRounds+1 {
			t.Errorf("err %v after %d calls; want ErrKeepsAsking after %d", err, calls, upstream.MaxInputRounds+1)
		}
	})
}

func TestTheListenAsksForEveryListChangeAndTheSubscriptionsInOrder(t *testing.T) {
	for _, c := range []struct {
		subs []string
		want string
	}{
		{nil, `{"notifications":{"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true}}`},
		{[]string{"file:///b", `file:///a"q`}, `{"notifications":{"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true,"resourceSubscriptions":["file:///a\"q","file:///b"]}}`},
	} {
		got := upstream.ListenParams(c.subs)
		if string(got) != c.want || !json.Valid(got) {
			t.Errorf("ListenParams(%q) = %s, want %s", c.subs, got, c.want)
		}
	}
}
