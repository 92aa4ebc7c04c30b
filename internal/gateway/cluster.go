// cluster.go joins the gateway to the other replicas of a deployment:
// sealed session ids (the key from the configuration), and, with Redis
// (package cluster), shared rate buckets, token events and the sealed
// sessions' liveness and per-identity counts.

package gateway

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth/seal"
	"github.com/mcpgate/mcpgate/internal/cluster"
	"github.com/mcpgate/mcpgate/internal/gateway/backends"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// sealer is the session sealer of the configured key, or nil without one.
func (g *Gateway) sealer() (*mcphttp.Sealer, error) {
	key, previous, err := g.cfg.Sessions.SessionKeys()
	if err != nil || key == nil {
		return nil, err
	}
	return mcphttp.NewSealer(key, previous)
}

// stateKeys seal the requestState of a 2026-07-28 caller's rounds: keys
// derived from the session key and the one it replaced, so that a retry
// opens on any replica. Without a session key the engine makes a key of
// this process's.
func (g *Gateway) stateKeys() (key, previous []byte) {
	k, prev, err := g.cfg.Sessions.SessionKeys()
	if err != nil || k == nil {
		return nil, nil
	}
	if prev != nil {
		previous = seal.Derive(prev, "mcpgate requestState")
	}
	return seal.Derive(k, "mcpgate requestState"), previous
}

func (g *Gateway) sharedSessions() mcphttp.SharedSessions {
	if g.cluster == nil {
		return nil
	}
	return g.cluster.Sessions()
}

// announceTokens publishes each token created or revoked here, so that
// the other replicas apply it at once; a failure leaves them to their next
// refresh from the store.
func (g *Gateway) announceTokens() {
	if g.cluster == nil {
		return
	}
	g.tokens.Announce(func(id string, revokedAt time.Time) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := g.cluster.Publish(ctx, cluster.TokenEvent{ID: id, RevokedAt: revokedAt}); err != nil {
			g.log.Warn("redis: a token change was not announced; other replicas see it at their next refresh", "token_id", id, "err", err)
		}
	})
}

// announceGrants publishes the principal of each grant revoked here, so
// that the other replicas end what they hold open for that person.
func (g *Gateway) announceGrants() {
	if g.cluster == nil || g.authServer == nil {
		return
	}
	g.authServer.Announce(func(principal string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := g.cluster.Publish(ctx, cluster.TokenEvent{Principal: principal}); err != nil {
			g.log.Warn("redis: a grant's revocation was not announced; other replicas end its person's upstream sessions when idle", "err", err)
		}
	})
}

// watchTokens applies the other replicas' token events until ctx ends.
func (g *Gateway) watchTokens(ctx context.Context) {
	g.cluster.Watch(ctx, func(ev cluster.TokenEvent) {
		if ev.Principal != "" {
			if g.authServer != nil {
				g.authServer.Heard(ev.Principal)
			}
			return
		}
		if err := g.tokens.Heard(ctx, ev.ID, ev.RevokedAt); err != nil && ctx.Err() == nil {
			g.log.Warn("token refresh failed", "err", err)
		}
	}, func() {
		if err := g.tokens.Refresh(ctx); err != nil && ctx.Err() == nil {
			g.log.Warn("token refresh failed", "err", err)
		}
	})
}

// sharedBucketsFailed logs, at most every ten seconds, that the shared
// rate buckets are unreachable: calls are admitted meanwhile.
func (g *Gateway) sharedBucketsFailed(err error) {
	now := time.Now().UnixNano()
	last := g.sharedFailedAt.Load()
	if now-last < int64(10*time.Second) || !g.sharedFailedAt.CompareAndSwap(last, now) {
		return
	}
	g.log.Warn("redis: rate buckets unreachable; calls are admitted without a rate limit until it is back", "err", err)
}

// upstreamExtras seal a session's per-client upstream sessions (HTTP
// backends) into its id, and hand them to the replica that resumes it
// (backends/resume.go).
type upstreamExtras struct{ set *backends.Set }

func (x upstreamExtras) Opened(ctx context.Context, s *mcp.Session) json.RawMessage {
	ups := x.set.OpenUpstreams(ctx, s)
	if len(ups) == 0 {
		return nil
	}
	out, _ := json.Marshal(ups)
	return out
}

func (x upstreamExtras) Resumed(s *mcp.Session, extra json.RawMessage) {
	var ups map[string]backends.UpstreamSession
	if json.Unmarshal(extra, &ups) == nil {
		x.set.ResumeUpstreams(s, ups)
	}
}

// replica is this replica's name among those sharing Redis, in the ids of
// the requests its sessions send clients, and where a client's answer to
// another replica's request goes (mcp.Options); none without Redis.
func (g *Gateway) replica() (name string, foreignAnswer func(replica, sessionID string, answer []byte)) {
	if g.handOff == nil {
		return "", nil
	}
	return g.handOff.Name(), g.handAnswer
}

// handAnswer hands a client's answer to a request another replica sent
// on the same session (a sealed session resumed here) to that replica.
func (g *Gateway) handAnswer(replica, sessionID string, answer []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	g.handOff.Answer(ctx, replica, sessionID, answer)
}

// deliverAnswer gives a client's answer another replica handed over to
// the request of this replica's session waiting for it.
func (g *Gateway) deliverAnswer(sessionID string, answer []byte) {
	if !g.server.DeliverAnswer(sessionID, answer) {
		g.log.Debug("redis: a client's answer handed over found no request waiting", "session", sessionID)
	}
}
