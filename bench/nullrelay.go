// nullrelay.go is the ceiling: a minimal HTTP forwarder that copies each
// request's bytes to the backend and the answer's bytes back, with no MCP
// parsing at all. Headers pass through, so Mcp-Session-Id keeps working.
// No relay that reads MCP can beat it on this machine.

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/signal"
	"sync"
	"syscall"
)

// runNullRelay is `bench null-relay -listen ADDR -upstream URL`.
func runNullRelay(args []string) error {
	fs := flag.NewFlagSet("null-relay", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to serve on")
	upstream := fs.String("upstream", "", "backend URL (the path is kept as given)")
	_ = fs.Parse(args)
	if *upstream == "" {
		return fmt.Errorf("-upstream is required")
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 1024, 1024
	t.DisableCompression = true
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", serveCounters)
	mux.Handle("/", forwarder{to: *upstream, t: t})
	return serveSignalled(*listen, mux)
}

type forwarder struct {
	to string
	t  http.RoundTripper
}

// hopHeaders are not forwarded (RFC 9110 §7.6.1).
var hopHeaders = map[string]bool{"Connection": true, "Keep-Alive": true, "Te": true, "Trailer": true,
	"Transfer-Encoding": true, "Upgrade": true, "Proxy-Connection": true}

func (f forwarder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.ContentLength > 0 {
		// The transport reads once more past the announced length, to check
		// the body has no extra bytes. By then the answer may have begun.
		// net/http closes a request's body once its answer is flushed, so
		// that read failed ("invalid Read on closed Body"). The transport
		// then dropped the connection under the answer still being copied
		// (2 calls in 24,000 with 64 KiB answers). Bounded here, the extra
		// read never reaches the closed body.
		body = &io.LimitedReader{R: r.Body, N: r.ContentLength}
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, f.to, body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.ContentLength = r.ContentLength
	for k, v := range r.Header {
		if !hopHeaders[k] {
			out.Header[k] = v
		}
	}
	resp, err := f.t.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		if !hopHeaders[k] {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
	// Flush as bytes arrive: an SSE answer must not wait for a full buffer.
	fl, _ := w.(http.Flusher)
	bp := buffers.Get().(*[]byte)
	defer buffers.Put(bp)
	buf := *bp
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
		}
		if err != nil {
			return // io.EOF or a broken backend: either way the answer is over
		}
	}
}

var buffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// serveSignalled serves h on addr until SIGTERM or SIGINT, printing the
// bound address first so that the bench can wait for it.
func serveSignalled(addr string, h http.Handler) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	fmt.Printf("listening on %s\n", ln.Addr())
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}
