// order_test.go pins the order between a call's notifications and its
// answer on the framed connection: what the MCP server sent before its
// answer reaches the client before that answer. Before the barrier
// (order.go), the notification channels and the answer were written by
// different goroutines, and a progress or log message sent just before the
// result often reached the gateway after it, when the call was over.

package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/wire"
)

// arrived drains what has reached a notification channel so far, without
// waiting. The client's reader queues each frame on its channel in the
// order the frames came, so once a call's answer has been read, every
// notification the proxy wrote before it is in the channel's queue.
func arrived(t *testing.T, ch *wire.Channel) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for {
		p, err := ch.Next(doneCtx)
		if err != nil {
			return out
		}
		resp, err := wire.DecodeResponse(p)
		if err != nil {
			t.Fatalf("notification %q: %v", p, err)
		}
		out = append(out, result(t, resp))
	}
}

var doneCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// The proxy keeps the MCP server's order between a call's notifications
// and its answer on the framed connection: 200 calls, alternately logging
// and reporting progress (three notifications each, all before the
// result), and after each answer all three of its notifications have
// already arrived on each of two notification channels.
func TestFramedAnswerComesAfterItsNotifications(t *testing.T) {
	for _, up := range []struct {
		name string
		new  func(*testing.T) *Upstream
	}{
		{"http", func(t *testing.T) *Upstream { return fixtureUpstream(t, nil) }},
		{"stdio", func(t *testing.T) *Upstream {
			cmd, env := childCommand()
			return newUpstream(t, UpstreamConfig{Kind: upstream.KindStdio, Command: cmd, Env: env})
		}},
	} {
		t.Run(up.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var w logWatch
			f := beginFramed(t, ctx, serveProxy(t, Options{Upstream: up.new(t), Logger: w.logger()}))
			notes := []*wire.Channel{
				f.open(t, ctx, wire.McpNotifications{}.Append(nil)),
				f.open(t, ctx, wire.McpNotifications{}.Append(nil)),
			}
			w.waitFor(t, ctx, logStreamOpen, len(notes))
			logs := make([]int, len(notes))
			for i := range 200 {
				tool, token := "test_tool_with_progress", fmt.Sprintf("tok-%d", i)
				if i%2 == 1 {
					tool = "test_tool_with_logging"
				}
				params := `{"name":"` + tool + `","arguments":{},"_meta":{"progressToken":"` + token + `"}}`
				result(t, f.exchange(t, ctx, "tools/call", params))
				for n, ch := range notes {
					progress := 0
					for _, msg := range arrived(t, ch) {
						var m struct {
							Method string
							Params struct{ ProgressToken string }
						}
						if err := json.Unmarshal(msg, &m); err != nil {
							t.Fatalf("notification %s: %v", msg, err)
						}
						switch {
						case m.Method == "notifications/message":
							logs[n]++
						case m.Method == "notifications/progress" && m.Params.ProgressToken == token:
							progress++
						case m.Method == "notifications/progress":
							t.Fatalf("call %d, stream %d: progress of another call arrived late: %s", i, n, msg)
						}
					}
					switch {
					case tool == "test_tool_with_progress" && progress != 3:
						t.Fatalf("call %d, stream %d: %d of its 3 progress notifications before its answer", i, n, progress)
					case logs[n] != 3*((i+1)/2):
						t.Fatalf("call %d, stream %d: %d log messages before its answer, want %d", i, n, logs[n], 3*((i+1)/2))
					}
				}
			}
		})
	}
}
