// era.go is which era of MCP a backend is spoken to in. With EraAuto the
// first connection asks (mcp.Client.Connect: server/discover, then
// initialize). The answer is kept for the backend's later connections and
// its per-client sessions, so that a reconnect does not ask again. A
// sessionless connection that fails to start forgets it, and the next asks
// afresh. Legacy SSE and the container wire are of the session era.

package backends

import (
	"context"
	"sync"

	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/mcp"
)

// eraCache is what a backend learned of its server's era.
type eraCache struct {
	mu      sync.Mutex
	learned mcp.Era
}

// connect readies client in the backend's era: the configured one, or
// the one learned, or learns it.
func (b *Backend) connect(ctx context.Context, client *mcp.Client) error {
	era := b.spec.Era
	if b.spec.Kind != upstream.KindStdio && b.spec.Kind != upstream.KindHTTP {
		era = mcp.EraSession
	}
	if era == mcp.EraAuto {
		b.era.mu.Lock()
		era = b.era.learned
		b.era.mu.Unlock()
	}
	got, err := client.Connect(ctx, era)
	b.era.mu.Lock()
	defer b.era.mu.Unlock()
	switch {
	case err == nil && b.spec.Era == mcp.EraAuto:
		b.era.learned = got
	case err != nil && era == mcp.EraSessionless && b.spec.Era == mcp.EraAuto:
		b.era.learned = mcp.EraAuto // ask again next time
	}
	return err
}

// listen keeps a subscriptions/listen open on a sessionless backend's
// client, which has no other way to tell of list changes: they arrive as
// notifications, and the client's OnNotification resyncs on them. A
// stream the server ends is opened again after upstream.Relisten (a resync first,
// for what changed while none was open). stop ends it and waits.
func (b *Backend) listen(ctx context.Context, client *mcp.Client, resync chan<- struct{}) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := client.Listen(ctx, upstream.ListenParams(nil), upstream.Relisten, func(err error) {
			if err != nil {
				b.log.Debug("backend: subscriptions/listen ended", "err", scrub(err.Error(), b.secrets))
			}
			select {
			case resync <- struct{}{}:
			default:
			}
		})
		if ctx.Err() == nil {
			// The server refuses to listen: its catalogue is read at
			// each connection only.
			b.log.Info("backend: subscriptions/listen refused; list changes are not followed", "err", scrub(err.Error(), b.secrets))
		}
	}()
	return func() { cancel(); <-done }
}
