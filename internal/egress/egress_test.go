// egress_test.go pins the outbound policy's rules. A refused address is
// stood in by egresstest.Forbidden, on 127.0.0.2, which fails the test if
// it is ever reached.

package egress_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/egress"
	"github.com/mcpgate/mcpgate/internal/egress/egresstest"
)

func TestOnlyGlobalUnicastAddressesArePublic(t *testing.T) {
	for _, tt := range []struct {
		addr   string
		public bool
	}{
		{"93.184.215.14", true},
		{"2606:4700::1111", true},
		{"127.0.0.1", false},
		{"127.0.0.2", false},
		{"::1", false},
		{"10.0.0.7", false},
		{"172.16.0.1", false},
		{"192.168.1.1", false},
		{"fd00::1", false},
		{"169.254.169.254", false}, // the cloud's metadata service
		{"fe80::1", false},
		{"100.64.0.1", false}, // CGNAT
		{"100.127.255.254", false},
		{"198.18.0.1", false}, // benchmarking
		{"198.19.255.255", false},
		{"192.0.0.8", false},          // IETF protocol assignments
		{"64:ff9b::a9fe:a9fe", false}, // NAT64 of 169.254.169.254
		{"::ffff:10.0.0.1", false},    // IPv4-mapped private
		{"::ffff:169.254.169.254", false},
		{"224.0.0.1", false},
		{"ff02::1", false},
		{"0.0.0.0", false},
		{"::", false},
		{"255.255.255.255", false},
		{"2002:a9fe:a9fe::1", false}, // 6to4 of 169.254.169.254
	} {
		if got := egress.Public(netip.MustParseAddr(tt.addr)); got != tt.public {
			t.Errorf("Public(%s) = %v, want %v", tt.addr, got, tt.public)
		}
	}
}

func TestAnAddressThatIsNotPublicIsRefusedAtDialTime(t *testing.T) {
	target, reached := egresstest.Forbidden(t)
	_, err := (&egress.Policy{}).Client().Get(target + "/latest/meta-data/")
	if !errors.Is(err, egress.ErrRefusedAddress) {
		t.Errorf("a fetch of %s: %v, want ErrRefusedAddress", target, err)
	}
	// A name that resolves to it is refused too: the check is on the
	// address dialled, not on the URL's text.
	_, err = (*egress.Policy)(nil).Client().Get(strings.Replace(target, "127.0.0.2", "localhost", 1))
	if err == nil {
		t.Error("a fetch of localhost was not refused")
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the refused address was reached %d times", n)
	}
}

func TestATrustedOriginAndAnAllowedHostAreReached(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer srv.Close()
	resp, err := (&egress.Policy{}).Client(srv.URL + "/mcp").Get(srv.URL + "/.well-known/oauth-protected-resource")
	if err != nil {
		t.Fatalf("the backend's own origin: %v", err)
	}
	resp.Body.Close()
	resp, err = (&egress.Policy{AllowHosts: []string{"127.0.0.1"}}).Client().Get(srv.URL)
	if err != nil {
		t.Fatalf("an allowed host: %v", err)
	}
	resp.Body.Close()
	// Another port of the trusted host is another origin.
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("another origin was reached") }))
	defer other.Close()
	if _, err := (&egress.Policy{}).Client(srv.URL).Get(other.URL); !errors.Is(err, egress.ErrRefusedAddress) {
		t.Errorf("another port of the trusted origin's host: %v, want refused", err)
	}
}

func TestARedirectIsNotFollowed(t *testing.T) {
	target, reached := egresstest.Forbidden(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+"/latest/meta-data/", http.StatusFound)
	}))
	defer srv.Close()
	resp, err := (&egress.Policy{}).Client(srv.URL).Get(srv.URL + "/.well-known/oauth-protected-resource")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || !errors.Is(egress.CheckStatus(resp), egress.ErrRedirect) {
		t.Errorf("status %d, CheckStatus %v: want the 302 itself, refused", resp.StatusCode, egress.CheckStatus(resp))
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the redirect's target was reached %d times", n)
	}
}

func TestAnOversizedAnswerFailsAtTheLimit(t *testing.T) {
	big := strings.Repeat("x", 4096)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/chunked" {
			w.(http.Flusher).Flush() // no Content-Length: the limit holds while reading
		} else {
			w.Header().Set("Content-Length", "4096")
		}
		_, _ = io.WriteString(w, big)
	}))
	defer srv.Close()
	p := &egress.Policy{MaxBody: 1024}
	if _, err := p.Client(srv.URL).Get(srv.URL + "/announced"); !errors.Is(err, egress.ErrTooLarge) {
		t.Errorf("an answer announcing 4096 bytes: %v, want ErrTooLarge", err)
	}
	resp, err := p.Client(srv.URL).Get(srv.URL + "/chunked")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if !errors.Is(err, egress.ErrTooLarge) || len(b) != 1024 {
		t.Errorf("a chunked answer of 4096 bytes: read %d, %v; want 1024 and ErrTooLarge", len(b), err)
	}
	// An answer of exactly the limit is whole.
	exact := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.(http.Flusher).Flush()
		_, _ = io.WriteString(w, big[:1024])
	}))
	defer exact.Close()
	resp, err = p.Client(exact.URL).Get(exact.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, err := io.ReadAll(resp.Body); err != nil || len(b) != 1024 {
		t.Errorf("an answer of the limit: %d %v", len(b), err)
	}
}

func TestASlowAnswerFailsAtTheDeadline(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush()
		select { // one byte, then nothing until the test ends
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	start := time.Now()
	resp, err := (&egress.Policy{Timeout: 200 * time.Millisecond}).Client(srv.URL).Get(srv.URL)
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil {
		t.Fatal("a body that never ends was read whole")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the slow answer took %v to fail", d)
	}
}

func TestASummaryIsEscapedAndBounded(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"https://as.example", `"https://as.example"`},
		{"a\nforged: line", `"a\nforged: line"`},
		{"<script>", `"\u003cscript\u003e"`},
		{"\x1b[31mred", `"\x1b[31mred"`},
		{"é", `"\u00e9"`},
	} {
		if got := egress.Summary(tt.in); got != tt.want {
			t.Errorf("Summary(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	if got := egress.Summary(strings.Repeat("a", 10_000)); len(got) > 120 || !strings.HasSuffix(got, "…") {
		t.Errorf("a long value's summary is %d bytes: %.40s…", len(got), got)
	}
}

// A failed fetch's error quotes its URL only as a Summary, and keeps its
// cause: net/http's *url.Error quoted the whole third-party URL.
func TestAFetchErrorShowsItsURLSummarised(t *testing.T) {
	long := "http://as.example/" + strings.Repeat("x", 500) + "<script>"
	err := egress.Err(&url.Error{Op: "Get", URL: long, Err: io.ErrUnexpectedEOF})
	if !errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "<script>") || len(err.Error()) > 200 {
		t.Errorf("Err: %v", err)
	}
	if egress.Err(nil) != nil || egress.Err(io.EOF) != io.EOF {
		t.Error("Err changes what is not a *url.Error")
	}
}
