// bounded.go bounds the requests of the routes that are not MCP's, as the
// MCP endpoints bound theirs: the console and its sign-in, the OAuth
// endpoints, the metadata, health. A body is read whole within a deadline
// and a size, or refused. Before it, POST /admin/login parsed multipart
// forms with no limit: eight concurrent 30 MB posts grew the process by 500
// MB and left 42 MB files in the temporary folder. A body dripped a byte
// every few seconds held /oauth/token open without end.

package mcphttp

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
)

// DefaultFormBytes bounds a non-MCP route's body: forms and small JSON
// documents (a client registration).
const DefaultFormBytes = 64 << 10

// Bounded is middleware for routes that are not MCP's. A request's body
// is read whole before next runs: at most max bytes (413 beyond), within
// timeout (408 after, and the connection closed). A multipart body is
// refused (415) before a byte of it is read. No route takes a file, and
// net/http's multipart parsing spills to the temporary folder. A request
// without a body passes as it is.
func Bounded(next http.Handler, max int64, timeout time.Duration) http.Handler {
	if max <= 0 {
		max = DefaultFormBytes
	}
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); strings.HasPrefix(mt, "multipart/") {
			w.Header().Set("Connection", "close")
			http.Error(w, "Unsupported Media Type: no route here takes a multipart body", http.StatusUnsupportedMediaType)
			return
		}
		body, err := readBody(w, r, max, timeout)
		if err != nil {
			writePlainBodyError(w, err)
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// NewServer is the http.Server of every listener the binary opens: the
// gateway's, the metrics', the proxy's and its daemons', the fixture's,
// pprof's. Headers must come within 10 s, at most 64 KiB of them. An idle
// keep-alive connection is closed after 2 minutes. It sets no ReadTimeout
// or WriteTimeout, which would end the long-lived streams: each route
// bounds its body's read itself (the MCP endpoints, and Bounded).
func NewServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
}
