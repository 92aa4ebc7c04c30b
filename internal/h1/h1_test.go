// h1_test.go pins the transport's rules against net/http's own server,
// and its answers to malformed responses against a raw TCP server that
// writes them (no real server sends them on purpose).

package h1_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/h1"
	"github.com/mcpgate/mcpgate/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// server is net/http's server with a count of the connections opened to
// it and of the requests it answered.
type server struct {
	*httptest.Server
	conns, closed, requests atomic.Int32
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	s := &server{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		h(w, r)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			s.conns.Add(1)
		case http.StateClosed:
			s.closed.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func newTransport(t *testing.T) *h1.Transport {
	tr := h1.New(http.DefaultTransport.(*http.Transport).Clone())
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// post sends body to u and returns the answer's body, read to its end.
func post(t *testing.T, tr http.RoundTripper, u, body string, header http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(testkit.Context(t), http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	return resp, string(got)
}

func TestAPostArrivesWhole(t *testing.T) {
	type seen struct {
		method, uri, host, ua, ct, body string
		length                          int64
		te                              []string
	}
	got := make(chan seen, 1)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.RequestURI, r.Host, r.UserAgent(), r.Header.Get("Content-Type"), string(b), r.ContentLength, r.TransferEncoding}
	})
	big := strings.Repeat("x", 100<<10) // past what is written behind the head
	for _, body := range []string{`{"jsonrpc":"2.0"}`, big} {
		post(t, newTransport(t), s.URL+"/mcp?a=b%20c", body, http.Header{"Content-Type": {"application/json"}})
		want := seen{"POST", "/mcp?a=b%20c", s.Listener.Addr().String(), "Go-http-client/1.1", "application/json", body, int64(len(body)), nil}
		if g := <-got; fmt.Sprint(g) != fmt.Sprint(want) {
			t.Errorf("the server saw %.200v, want %.200v", g, want)
		}
	}
}

func TestAPostWithoutARequestArrivesAsOneWithARequestDoes(t *testing.T) {
	type seen struct {
		method, uri, host, ua, ct, body string
		length                          int64
	}
	got := make(chan seen, 1)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.RequestURI, r.Host, r.UserAgent(), r.Header.Get("Content-Type"), string(b), r.ContentLength}
		io.WriteString(w, "ok")
	})
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.RequestURI, r.Host, r.UserAgent(), r.Header.Get("Content-Type"), string(b), r.ContentLength}
		io.WriteString(w, "ok")
	}))
	defer tls.Close()
	h := http.Header{"Content-Type": {"application/json"}}
	big := strings.Repeat("x", 100<<10)
	for _, tt := range []struct {
		name string
		tr   *h1.Transport
		base string
		body []string // the Body's parts
	}{
		{"small", newTransport(t), s.URL, []string{`{"jsonrpc":"2.0"}`}},
		{"small, in three parts", newTransport(t), s.URL, []string{`{"jsonrpc":`, `"2.0"`, `}`}},
		{"past what is copied behind the head", newTransport(t), s.URL, []string{big}},
		{"past what is copied behind the head, in three parts", newTransport(t), s.URL, []string{`{"a":"`, big, `"}`}},
		{"tls, through net/http", h1.New(tls.Client().Transport.(*http.Transport)), tls.URL, []string{`{}`}},
		{"tls, through net/http, in three parts", h1.New(tls.Client().Transport.(*http.Transport)), tls.URL, []string{`{"a":"`, big, `"}`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := mustURL(t, tt.base+"/mcp?a=b%20c")
			var body h1.Body
			for i, p := range tt.body {
				body[i] = []byte(p)
			}
			for range 2 {
				resp, err := tt.tr.Post(testkit.Context(t), u, h, body)
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(b) != "ok" || err != nil {
					t.Fatalf("answer %q, %v", b, err)
				}
				whole := strings.Join(tt.body, "")
				want := seen{"POST", "/mcp?a=b%20c", u.Host, "Go-http-client/1.1", "application/json", whole, int64(len(whole))}
				if g := <-got; fmt.Sprint(g) != fmt.Sprint(want) {
					t.Errorf("the server saw %.200v, want %.200v", g, want)
				}
			}
		})
	}
	if n := s.conns.Load(); n != 4 {
		t.Errorf("%d connections for four transports' two POSTs each, want 4", n)
	}
}

func TestAnAnswerReadToItsEndLeavesItsConnectionForTheNext(t *testing.T) {
	for _, tt := range []struct {
		name   string
		answer func(w http.ResponseWriter)
	}{
		{"content-length", func(w http.ResponseWriter) { io.WriteString(w, "hello") }},
		{"chunked", func(w http.ResponseWriter) {
			io.WriteString(w, "hel")
			w.(http.Flusher).Flush()
			io.WriteString(w, "lo")
		}},
		{"empty", func(w http.ResponseWriter) { w.WriteHeader(http.StatusAccepted) }},
		{"no content", func(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, _ *http.Request) { tt.answer(w) })
			tr := newTransport(t)
			for range 3 {
				post(t, tr, s.URL, "{}", nil)
			}
			if n := s.conns.Load(); n != 1 {
				t.Errorf("3 requests opened %d connections, want 1", n)
			}
		})
	}
}

func TestAnAnswerThatClosesItsConnectionIsNotReused(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Connection", "close")
		io.WriteString(w, "bye")
	})
	tr := newTransport(t)
	for range 2 {
		if resp, body := post(t, tr, s.URL, "{}", nil); body != "bye" || !resp.Close {
			t.Fatalf("answer %q, Close %v", body, resp.Close)
		}
	}
	if n := s.conns.Load(); n != 2 {
		t.Errorf("2 requests opened %d connections, want 2", n)
	}
}

func TestAConnectionTheServerClosedWhileIdleIsNotUsed(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	tr := newTransport(t)
	post(t, tr, s.URL, "{}", nil)
	s.CloseClientConnections()
	testkit.WaitFor(t, "the server closed its idle connection", func() bool { return s.closed.Load() == 1 })
	// A POST is not sent again after a failure: were the closed
	// connection used, this one would fail.
	if _, body := post(t, tr, s.URL, "{}", nil); body != "ok" {
		t.Errorf("answer %q", body)
	}
	if n := s.conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

func TestAnEventStreamArrivesAsItIsSent(t *testing.T) {
	next := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		<-next
		io.WriteString(w, "data: two\n\n")
	})
	tr := newTransport(t)
	req, _ := http.NewRequestWithContext(testkit.Context(t), http.MethodPost, s.URL, strings.NewReader("{}"))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	// The second event is sent only once the first has been read here.
	if line, err := br.ReadString('\n'); line != "data: one\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	close(next)
	rest, err := io.ReadAll(br)
	if string(rest) != "\ndata: two\n\n" || err != nil {
		t.Errorf("the rest %q, %v", rest, err)
	}
}

func TestACancelledRequestEndsItsReadAndItsConnection(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // net/http notices a closed connection only then
		io.WriteString(w, "first")
		w.(http.Flusher).Flush()
		if r.URL.Path == "/again" {
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	tr := newTransport(t)
	ctx, cancel := context.WithCancel(testkit.Context(t))
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, strings.NewReader("{}"))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := resp.Body.Read(buf); !errors.Is(err, context.Canceled) {
		t.Errorf("a read after the cancel: %v, want context.Canceled", err)
	}
	resp.Body.Close()
	post(t, tr, s.URL+"/again", "{}", nil)
	if n := s.conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2 (the cancelled one not reused)", n)
	}
}

func TestARequestCancelledBeforeItsAnswerReturnsTheCancel(t *testing.T) {
	arrived := make(chan struct{})
	s := newServer(t, func(_ http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // net/http notices a closed connection only then
		close(arrived)
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(testkit.Context(t))
	go func() { <-arrived; cancel() }()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, strings.NewReader("{}"))
	if _, err := newTransport(t).RoundTrip(req); !errors.Is(err, context.Canceled) {
		t.Errorf("RoundTrip: %v, want context.Canceled", err)
	}
}

func TestAHeaderThatWouldSplitTheRequestIsRefused(t *testing.T) {
	s := newServer(t, func(http.ResponseWriter, *http.Request) {})
	for _, h := range []http.Header{
		{"X-Value": {"a\r\nInjected: 1"}},
		{"X-Bad Name": {"a"}},
		{"X-Nul": {"a\x00"}},
	} {
		req, _ := http.NewRequestWithContext(testkit.Context(t), http.MethodPost, s.URL, strings.NewReader("{}"))
		req.Header = h
		if _, err := newTransport(t).RoundTrip(req); err == nil {
			t.Errorf("%q was sent", h)
		}
	}
	req, _ := http.NewRequestWithContext(testkit.Context(t), http.MethodPost, s.URL, strings.NewReader("{}"))
	req.Host = "a\r\nb"
	if _, err := newTransport(t).RoundTrip(req); err == nil {
		t.Error("a Host with a line break was sent")
	}
	if n := s.requests.Load(); n != 0 {
		t.Errorf("the server answered %d requests", n)
	}
}

func TestWhatH1DoesNotSendGoesThroughNetHTTP(t *testing.T) {
	t.Run("tls", func(t *testing.T) {
		s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, r.TLS != nil)
		}))
		defer s.Close()
		tr := h1.New(s.Client().Transport.(*http.Transport))
		if _, body := post(t, tr, s.URL, "{}", nil); body != "true" {
			t.Errorf("answer %q", body)
		}
	})
	t.Run("proxy", func(t *testing.T) {
		proxied := make(chan string, 1)
		proxy := newServer(t, func(_ http.ResponseWriter, r *http.Request) { proxied <- r.RequestURI })
		f := http.DefaultTransport.(*http.Transport).Clone()
		f.Proxy = http.ProxyURL(mustURL(t, proxy.URL))
		post(t, h1.New(f), "http://backend.invalid/mcp", "{}", nil)
		if uri := <-proxied; uri != "http://backend.invalid/mcp" {
			t.Errorf("the proxy saw %q", uri)
		}
	})
	t.Run("unknown length", func(t *testing.T) {
		got := make(chan []string, 1)
		s := newServer(t, func(_ http.ResponseWriter, r *http.Request) { got <- r.TransferEncoding })
		req, _ := http.NewRequestWithContext(testkit.Context(t), http.MethodPost, s.URL, io.MultiReader(strings.NewReader("{}")))
		resp, err := newTransport(t).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if te := <-got; fmt.Sprint(te) != "[chunked]" {
			t.Errorf("sent with transfer encoding %v", te)
		}
	})
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// raw is a TCP server that reads a request's head and writes answer.
func raw(t *testing.T, answer string) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				r := bufio.NewReader(c)
				req, err := http.ReadRequest(r)
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				io.WriteString(c, answer)
			})
		}
	})
	return "http://" + l.Addr().String()
}

func TestAMalformedAnswerIsAClearError(t *testing.T) {
	for _, tt := range []struct {
		name, answer string
		want         string // in the error, of RoundTrip or of reading the body
	}{
		{"no status line", "hello\r\n\r\n", "malformed"},
		{"a status of two digits", "HTTP/1.1 20 OK\r\n\r\n", "malformed"},
		{"another protocol", "HTTP/2.0 200 OK\r\n\r\n", "malformed"},
		{"a header line without a colon", "HTTP/1.1 200 OK\r\nContent-Length 2\r\n\r\nok", "malformed"},
		{"a space in a name", "HTTP/1.1 200 OK\r\nContent Length: 2\r\n\r\nok", "malformed"},
		{"a control character in a value", "HTTP/1.1 200 OK\r\nX-A: a\x01b\r\nContent-Length: 2\r\n\r\nok", "malformed"},
		{"a folded first line", "HTTP/1.1 200 OK\r\n folded\r\n\r\n", "malformed"},
		{"two lengths", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok", "Content-Length"},
		{"a length that is no number", "HTTP/1.1 200 OK\r\nContent-Length: -2\r\n\r\nok", "Content-Length"},
		{"gzip transfer coding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nok", "unsupported transfer encoding"},
		{"an upgrade nobody asked for", "HTTP/1.1 101 Switching Protocols\r\n\r\n", "101"},
		{"a body shorter than its length", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "unexpected EOF"},
		{"a chunk size that is no number", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n", "chunked"},
		{"a chunk without its CRLF", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokXX0\r\n\r\n", "chunked"},
		{"a chunk size past any body", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n", "chunked"},
		{"a chunked body cut short", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nok", "unexpected EOF"},
		{"a head past the limit", "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", 2000) + "\r\n\r\n", "exceeded"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := http.DefaultTransport.(*http.Transport).Clone()
			f.MaxResponseHeaderBytes = 1024
			tr := h1.New(f)
			defer tr.CloseIdleConnections()
			req, _ := http.NewRequestWithContext(testkit.Context(t), http.MethodPost, raw(t, tt.answer), strings.NewReader("{}"))
			resp, err := tr.RoundTrip(req)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one naming %q", err, tt.want)
			}
		})
	}
}

func TestAnAnswerOfUsualShapeIsReadAsNetHTTPReadsIt(t *testing.T) {
	const early = "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" // skipped, as net/http's client skips it
	for _, tt := range []struct{ name, answer string }{
		{"1xx before the answer", early + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"},
		{"lower-case names", "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nmcp-session-id: abc\r\nx-multi: 1\r\nX-MULTI: 2\r\ncontent-length: 2\r\n\r\nok"},
		{"a folded value", "HTTP/1.1 200 OK\r\nX-Folded: a\r\n  b\r\nContent-Length: 2\r\n\r\nok"},
		{"a bare LF", "HTTP/1.1 200 OK\nContent-Length: 2\n\nok"},
		{"chunk extensions and trailers", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;ext=1\r\nok\r\n0\r\nX-Trailer: t\r\n\r\n"},
		{"to the connection's end", "HTTP/1.1 200 OK\r\n\r\nuntil the end"},
		{"an uncommon reason", "HTTP/1.1 200 Fine\r\nContent-Length: 0\r\n\r\n"},
		{"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want, err := http.ReadResponse(bufio.NewReader(strings.NewReader(strings.TrimPrefix(tt.answer, early))), nil)
			if err != nil {
				t.Fatal(err)
			}
			wantBody, _ := io.ReadAll(want.Body)
			tr := newTransport(t)
			resp, body := post(t, tr, raw(t, tt.answer), "{}", nil)
			if resp.Status != want.Status || resp.Proto != want.Proto || fmt.Sprint(resp.Header) != fmt.Sprint(want.Header) ||
				body != string(wantBody) || resp.ContentLength != want.ContentLength || resp.Close != want.Close {
				t.Errorf("read as %q %q %v %q (%d, close %v), net/http reads %q %q %v %q (%d, close %v)",
					resp.Status, resp.Proto, resp.Header, body, resp.ContentLength, resp.Close,
					want.Status, want.Proto, want.Header, wantBody, want.ContentLength, want.Close)
			}
		})
	}
}

func TestAConnectionIdleLongerThanTheIdleTimeoutIsClosed(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	f := http.DefaultTransport.(*http.Transport).Clone()
	f.IdleConnTimeout = 20 * time.Millisecond
	tr := h1.New(f)
	post(t, tr, s.URL, "{}", nil)
	// Nothing else closes it: the test server keeps idle connections.
	testkit.WaitFor(t, "the idle connection closed", func() bool { return s.closed.Load() == 1 })
	post(t, tr, s.URL, "{}", nil)
	testkit.WaitFor(t, "the second idle connection closed", func() bool { return s.closed.Load() == 2 })
}

func TestAnAnswerBeforeTheWholeRequestIsReturned(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "too large", http.StatusRequestEntityTooLarge)
	})
	tr := newTransport(t)
	resp, body := post(t, tr, s.URL, strings.Repeat("x", 8<<20), nil)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || body != "too large\n" {
		t.Errorf("answer %d %q", resp.StatusCode, body)
	}
}

func TestCloseIdleConnectionsClosesThem(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	tr := newTransport(t)
	post(t, tr, s.URL, "{}", nil)
	tr.CloseIdleConnections()
	post(t, tr, s.URL, "{}", nil)
	if n := s.conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

// A request on a kept connection, its answer read to the end, costs the
// answer and its header: the budget is what that costs today. The server
// allocates nothing per request, so that all that is counted is ours. A
// Post makes no request: it costs what RoundTrip of a reused one does.
func TestARequestOnAKeptConnectionStaysWithinItsAllocationBudget(t *testing.T) {
	const budget = 8
	if testkit.Race {
		t.Skip("the race detector allocates on its own account; the plain run checks the budget")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	h := http.Header{"Content-Type": {"application/json"}}
	for _, tt := range []struct {
		name string
		send func(tr *h1.Transport, u *url.URL) (*http.Response, error)
	}{
		{"RoundTrip", func() func(*h1.Transport, *url.URL) (*http.Response, error) {
			body := &reusable{}
			var req *http.Request
			return func(tr *h1.Transport, u *url.URL) (*http.Response, error) {
				if req == nil {
					req, _ = http.NewRequestWithContext(ctx, http.MethodPost, u.String(), nil)
					req.Header = h
				}
				body.Reset(msg)
				req.Body, req.ContentLength = body, int64(len(msg))
				return tr.RoundTrip(req)
			}
		}()},
		{"Post", func(tr *h1.Transport, u *url.URL) (*http.Response, error) { return tr.Post(ctx, u, h, h1.Body{msg}) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := keepAlive(t, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nDate: Mon, 07 Dec 2026 00:00:00 GMT\r\nContent-Length: 36\r\n\r\n"+
				`{"jsonrpc":"2.0","id":1,"result":{}}`)
			tr := newTransport(t)
			u := mustURL(t, s.url)
			var buf [256]byte
			send := func() {
				resp, err := tt.send(tr, u)
				if err != nil {
					t.Fatal(err)
				}
				for err == nil {
					_, err = resp.Body.Read(buf[:])
				}
				resp.Body.Close()
			}
			send()
			if n := testing.AllocsPerRun(200, send); n > budget {
				t.Errorf("%.0f allocations per request, budget %d", n, budget)
			}
			if n := s.conns.Load(); n != 1 {
				t.Errorf("%d connections, want 1", n)
			}
		})
	}
}

// keepAlive is a TCP server that answers every request on a connection
// with answer, allocating nothing per request.
type keepAliveServer struct {
	url   string
	conns atomic.Int32
}

func keepAlive(t *testing.T, answer string) *keepAliveServer {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &keepAliveServer{url: "http://" + l.Addr().String()}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	reply := []byte(answer)
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			t.Cleanup(func() { c.Close() })
			wg.Go(func() {
				r := bufio.NewReader(c)
				for {
					length := 0
					for {
						line, err := r.ReadSlice('\n')
						if err != nil {
							return
						}
						if len(line) <= 2 {
							break
						}
						if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
							for _, d := range bytes.TrimSpace(v) {
								length = length*10 + int(d-'0')
							}
						}
					}
					if _, err := r.Discard(length); err != nil {
						return
					}
					if _, err := c.Write(reply); err != nil {
						return
					}
				}
			})
		}
	})
	return s
}

// reusable is a request body the test resets instead of allocating.
type reusable struct{ bytes.Reader }

func (*reusable) Close() error { return nil }
