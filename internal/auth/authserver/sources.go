// sources.go limits Dynamic Client Registration per source address, beside
// the server's overall rate: one address may not register the store full
// (max_clients anonymous POSTs turned registration off), nor crowd out
// everyone else's registrations at the overall rate.

package authserver

import (
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Per source: a burst of registrationBurst, then RegisterPerSource.
const (
	registrationBurst   = 10
	maxSourcesTracked   = 4096
	defaultPerSourceGap = time.Minute
)

// sourceLimits are the registration budgets of the source addresses
// seen, at most maxSourcesTracked (those whose budget is whole again are
// dropped first: forgetting them loses nothing).
type sourceLimits struct {
	every rate.Limit
	mu    sync.Mutex
	m     map[string]*rate.Limiter
}

// allow reports whether r's source may register now.
func (s *sourceLimits) allow(r *http.Request, now time.Time) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]*rate.Limiter{}
	}
	l := s.m[host]
	if l == nil {
		if len(s.m) >= maxSourcesTracked {
			for k, v := range s.m {
				if v.TokensAt(now) >= registrationBurst {
					delete(s.m, k)
				}
			}
		}
		if len(s.m) >= maxSourcesTracked {
			return false // every tracked source is spending: refuse newcomers too
		}
		l = rate.NewLimiter(s.every, registrationBurst)
		s.m[host] = l
	}
	return l.AllowN(now, 1)
}
