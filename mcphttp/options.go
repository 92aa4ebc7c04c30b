// options.go is the one place the HTTP transports are configured and
// defaulted.

package mcphttp

import (
	"log/slog"
	"net/http"
	"time"
)

// Options configures the HTTP server transports.
type Options struct {
	// Stateless serves each POST on its own, without sessions: any replica
	// can answer any request, and no server-to-client stream exists.
	Stateless bool
	// MaxBodyBytes bounds a POST body (default 4 MiB); over it, 413.
	MaxBodyBytes int64
	// BodyTimeout bounds the time to read a POST body (default 30
	// seconds); a body still arriving then is answered 408 and its
	// connection closed.
	BodyTimeout time.Duration
	// IdleTimeout ends a session nobody has used for this long (default
	// 30 minutes). Clients that vanish without DELETE are reaped this way.
	IdleTimeout time.Duration
	// MaxSessions caps live sessions (default 10,000); beyond it, idle
	// sessions are reaped early or new ones refused with 503.
	MaxSessions int
	// MaxSessionsPerIdentity caps the live sessions one identity holds on
	// each transport (default 64); past it, initialize (or a legacy SSE
	// stream) is refused with 429, so that one caller cannot fill the
	// table. At MaxSessions, eviction takes the asking identity's own
	// least recently used idle session before anyone else's.
	MaxSessionsPerIdentity int
	// KeepAlive is the interval of SSE comment lines that keep idle streams
	// open through proxies (default 15 seconds).
	KeepAlive time.Duration
	// ReplayEvents is how many events of a stream (a session's standalone
	// stream, a resumable POST stream) are kept for a client resuming with
	// Last-Event-ID (default 256).
	ReplayEvents int
	// ReplayBytes bounds the bytes of those events per stream (default 1
	// MiB; the newest event is kept whatever its size), and the finished
	// POST streams a session keeps hold at most keptStreamsBytes times it
	// together.
	ReplayBytes int
	// Sessionless serves requests of the 2026-07-28 revision beside the
	// 2025 era (sessionless.go). Off by default until the revision is
	// whole: a client that can speak both (the Go SDK) would otherwise
	// move to it and lose what 2026-07-28 carries differently
	// (server-to-client requests become multi round-trip requests).
	Sessionless bool
	// MessagesPath is where the legacy SSE transport tells clients to POST
	// (default "/messages").
	MessagesPath string
	// Sealer, when set, makes a Streamable HTTP session's id sealed state
	// (sealed.go): any replica holding the same key resumes a session
	// another one opened, with no sticky load balancer.
	Sealer *Sealer
	// SealedMaxAge is how long a sealed id may be resumed after it was
	// issued when there are no Shared sessions to say whether it is still
	// open (default 24 hours).
	SealedMaxAge time.Duration
	// Extras, with a Sealer, seal what else a session needs on another
	// replica (the gateway: its per-client upstream sessions).
	Extras SessionExtras
	// Shared, when set, keeps the sessions' liveness and the per-identity
	// counts where every replica sees them (Redis: package cluster).
	Shared SharedSessions
	// SessionRefused, when set, is told of each session refused at a
	// cap (MaxSessions, MaxSessionsPerIdentity), with the refused
	// request (its context holds the caller's identity).
	SessionRefused func(r *http.Request)
	Logger         *slog.Logger
}

func (o *Options) sessionRefused(r *http.Request) {
	if o.SessionRefused != nil {
		o.SessionRefused(r)
	}
}

func (o Options) withDefaults() Options {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 4 << 20
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = 30 * time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 30 * time.Minute
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = 10000
	}
	if o.MaxSessionsPerIdentity <= 0 {
		o.MaxSessionsPerIdentity = 64
	}
	if o.KeepAlive <= 0 {
		o.KeepAlive = 15 * time.Second
	}
	if o.ReplayEvents <= 0 {
		o.ReplayEvents = 256
	}
	if o.ReplayBytes <= 0 {
		o.ReplayBytes = 1 << 20
	}
	if o.Sealer == nil {
		o.Shared = nil // only sealed sessions are shared
	}
	if o.SealedMaxAge <= 0 {
		o.SealedMaxAge = 24 * time.Hour
	}
	if o.MessagesPath == "" {
		o.MessagesPath = "/messages"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}
