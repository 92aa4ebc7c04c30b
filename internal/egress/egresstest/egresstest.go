// Package egresstest stands in, for tests of the outbound policy, an
// address the policy refuses. Tests never aim at a real link-local,
// private or public address, even to show it refused: a broken check
// would send the traffic off the machine. Another loopback address,
// 127.0.0.2, is another origin than a test server on 127.0.0.1, and the
// policy refuses it as it refuses any address that is not public.
package egresstest

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// Forbidden serves on 127.0.0.2 until the test ends and returns its URL
// and the count of requests that reached it, which a test of the policy
// wants to stay 0. It answers as a cloud's metadata service would, with
// something a leak would show. Where 127.0.0.2 cannot be bound the test
// is skipped.
func Forbidden(t testing.TB) (url string, reached *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2 here: %v", err)
	}
	reached = &atomic.Int32{}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached.Add(1)
		_, _ = io.WriteString(w, `{"AccessKeyId":"instance credentials"}`)
	})}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL, reached
}
