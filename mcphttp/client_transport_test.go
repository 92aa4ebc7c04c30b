// client_transport_test.go pins what a StreamableConn's POSTs keep of
// http.Client while they skip Client.Do: a redirect is still followed,
// credentials in the URL still become basic authentication, and a client
// with a cookie jar or a timeout still sends every request itself.

package mcphttp

import (
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgate/mcpgate/internal/testkit"
)

// sdkBehind serves the SDK's Streamable HTTP server at /mcp of a server
// whose other paths are front's.
func sdkBehind(t *testing.T, front func(w http.ResponseWriter, r *http.Request)) *httptest.Server {
	t.Helper()
	s := newSDKServer()
	mux := http.NewServeMux()
	mux.Handle("/mcp", sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{JSONResponse: true}))
	mux.HandleFunc("/", front)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestClientStreamableFollowsARedirectedPOST(t *testing.T) {
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
	var redirected atomic.Int32
	srv := sdkBehind(t, func(w http.ResponseWriter, r *http.Request) {
		redirected.Add(1)
		http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
	})
	conn, err := DialStreamable(ctx, srv.URL+"/old", ClientOptions{HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	c := newOurClient(t, conn)
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if got := c.callTool(ctx, t, `{"name":"echo","arguments":{"text":"moved"}}`); got != "echo: moved" {
		t.Errorf("echo = %q", got)
	}
	if redirected.Load() == 0 {
		t.Error("the old path was never asked: the test did not exercise a redirect")
	}
}

func TestClientStreamableSendsURLCredentialsAsBasicAuth(t *testing.T) {
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
	var posts, authorized atomic.Int32
	srv := sdkBehind(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
			if u, p, ok := r.BasicAuth(); ok && u == "user" && p == "pw" {
				authorized.Add(1)
			}
		}
		http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
	})
	u, _ := url.Parse(srv.URL + "/old")
	u.User = url.UserPassword("user", "pw")
	conn, err := DialStreamable(ctx, u.String(), ClientOptions{HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	c := newOurClient(t, conn)
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if posts.Load() == 0 || authorized.Load() != posts.Load() {
		t.Errorf("%d of %d POSTs carried the URL's credentials as basic auth", authorized.Load(), posts.Load())
	}
}

func TestDirectTransportOnlyWhereClientDoWouldAddNothing(t *testing.T) {
	plain, _ := url.Parse("http://127.0.0.1:1/mcp")
	withUser, _ := url.Parse("http://u:p@127.0.0.1:1/mcp")
	jar, _ := cookiejar.New(nil)
	own := &http.Transport{}
	for _, c := range []struct {
		name   string
		hc     *http.Client
		u      *url.URL
		direct bool
	}{
		{"a plain client", &http.Client{Transport: own}, plain, true},
		{"a client on the default transport", &http.Client{}, plain, true},
		{"a cookie jar", &http.Client{Transport: own, Jar: jar}, plain, false},
		{"a timeout", &http.Client{Transport: own, Timeout: time.Minute}, plain, false},
		{"credentials in the URL", &http.Client{Transport: own}, withUser, false},
	} {
		if got := directTransport(c.hc, c.u) != nil; got != c.direct {
			t.Errorf("%s: direct = %v, want %v", c.name, got, c.direct)
		}
	}
}

// The POSTs of a session share one header map only where nothing writes to
// it: a cookie jar adds its cookies to the request it is given.
func TestClientStreamablePOSTsThroughAJarEachCarryTheCookieOnce(t *testing.T) {
	testkit.LeakCheck(t)
	ctx := testkit.Context(t)
	s := newSDKServer()
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{JSONResponse: true})
	var mu sync.Mutex
	var cookies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			mu.Lock()
			cookies = append(cookies, r.Header.Get("Cookie"))
			mu.Unlock()
		}
		http.SetCookie(w, &http.Cookie{Name: "k", Value: "v"})
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	conn, err := DialStreamable(ctx, srv.URL, ClientOptions{HTTPClient: &http.Client{Transport: srv.Client().Transport, Jar: jar}})
	if err != nil {
		t.Fatal(err)
	}
	c := newOurClient(t, conn)
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		c.callTool(ctx, t, `{"name":"echo","arguments":{"text":"x"}}`)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(cookies) < 4 {
		t.Fatalf("%d POSTs seen", len(cookies))
	}
	for i, got := range cookies[1:] {
		if got != "k=v" {
			t.Errorf("POST %d carried Cookie %q, want k=v", i+2, got)
		}
	}
}
