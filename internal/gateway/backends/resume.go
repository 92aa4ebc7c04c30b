// resume.go lets a per-client upstream session of an HTTP backend follow
// its front session to another replica. The front session may be resumable
// elsewhere (mcp.Session.Resumable: its id is sealed). The gateway then
// opens its upstream sessions as it initializes (OpenUpstreams), and seals
// their ids into the front session's id. A replica resuming the front
// session hands them back (ResumeUpstreams). Its first call takes up the
// same upstream session, with no initialize and the same server-side state,
// instead of opening another. Such an upstream session is left open (not
// DELETEd) when its front session ends on one replica for any reason but
// the client's DELETE. A stdio backend's upstream session is a child
// process of one replica and cannot move; nor can an SSE one.

package backends

import (
	"context"

	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/mcp"
)

// UpstreamSession is what another replica needs to take up an upstream
// session: the server's session id and the negotiated revision.
type UpstreamSession struct {
	ID      string `json:"s"`
	Version string `json:"v"`
}

// movable reports whether the backend's per-client sessions can follow
// their front session to another replica.
func (b *Backend) movable() bool {
	return b.spec.Session == upstream.SessionPerClient && b.spec.Kind == upstream.KindHTTP && !b.spec.Identity.PerUser()
}

func (b *Backend) pool() *sessionPool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sessions
}

// openUpstream opens front's upstream session now and says how to take
// it up, or false when there is none to move (not per-client HTTP, down,
// sessionless, failed).
func (b *Backend) openUpstream(ctx context.Context, front *mcp.Session) (UpstreamSession, bool) {
	p := b.pool()
	if !b.movable() || p == nil {
		return UpstreamSession{}, false
	}
	_, release, err := p.Route(ctx, &mcp.Request{Session: front})
	if err != nil {
		b.log.Warn("backend: upstream session not opened at initialize; it will open at the first call", "err", err)
		return UpstreamSession{}, false
	}
	if release != nil {
		defer release()
	}
	p.mu.Lock()
	u := p.byKey[poolKey{front: front}]
	p.mu.Unlock()
	if u == nil || u.conn == nil || u.conn.SessionID() == "" || u.up.Client.Sessionless() {
		return UpstreamSession{}, false
	}
	return UpstreamSession{ID: u.conn.SessionID(), Version: u.up.Client.ProtocolVersion()}, true
}

// resumeUpstream has front's first call take up st instead of opening an
// upstream session.
func (b *Backend) resumeUpstream(front *mcp.Session, st UpstreamSession) {
	p := b.pool()
	if !b.movable() || p == nil || st.ID == "" || st.Version == "" {
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.resume[front] = st
	p.mu.Unlock()
	go func() { // forgotten if the front session never calls
		select {
		case <-front.Done():
		case <-p.ctx.Done():
		}
		p.mu.Lock()
		delete(p.resume, front)
		p.mu.Unlock()
	}()
}

// OpenUpstreams opens front's upstream sessions on every per-client HTTP
// backend and returns them by backend name (nil when there are none).
func (s *Set) OpenUpstreams(ctx context.Context, front *mcp.Session) map[string]UpstreamSession {
	var out map[string]UpstreamSession
	for _, b := range s.backends() {
		if st, ok := b.openUpstream(ctx, front); ok {
			if out == nil {
				out = map[string]UpstreamSession{}
			}
			out[b.Name()] = st
		}
	}
	return out
}

// ResumeUpstreams hands a resumed front session its upstream sessions.
func (s *Set) ResumeUpstreams(front *mcp.Session, sessions map[string]UpstreamSession) {
	for name, st := range sessions {
		if b := s.Backend(name); b != nil {
			b.resumeUpstream(front, st)
		}
	}
}

func (s *Set) backends() []*Backend {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Backend, 0, len(s.members))
	for _, m := range s.members {
		out = append(out, m.b)
	}
	return out
}
