// Package egress is the one policy for the HTTP requests the gateway makes
// on someone else's word. Such a request may go to a URL a backend's 401
// named, a link inside metadata it served, or a client_id that is a URL. It
// may go to an endpoint or a key set an issuer's metadata points to. The
// operator's configuration chose none of them, so each request goes out
// under the same rules:
//
//   - redirects are not followed (a metadata URL on the backend's own
//     origin answered 302 to the cloud's metadata service, and the gateway
//     followed it);
//   - a connection takes at most ConnectTimeout, a whole request at most
//     Timeout, and an answer's body at most MaxBody bytes;
//   - the address is checked when the connection is made, after the name is
//     resolved, so a name that resolves inward is refused too. Only global
//     unicast addresses are reached, unless the host is one the operator
//     allowed, or the origin is one the operator configured (a backend on
//     loopback whose metadata is on its own origin);
//   - what was fetched reaches a log line, an error or a page only as a
//     Summary: escaped and of bounded size.
package egress

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Defaults of a Policy's limits.
const (
	DefaultConnectTimeout = 5 * time.Second
	DefaultTimeout        = 10 * time.Second
	DefaultMaxBody        = 1 << 20
)

// Policy is the outbound policy. Its zero value (and a nil *Policy) is the
// default: public addresses only, the default limits.
type Policy struct {
	// AllowHosts are hosts, as URLs name them (a name or an address), that
	// may be reached whatever address they resolve to: an identity
	// provider inside the operator's network.
	AllowHosts []string
	// ConnectTimeout, Timeout and MaxBody bound each request (0: the
	// defaults).
	ConnectTimeout time.Duration
	Timeout        time.Duration
	MaxBody        int64
}

// ErrRefusedAddress is the error of a connection to an address the policy
// does not admit.
var ErrRefusedAddress = errors.New("egress: the address is not a public one, and its host is not allowed")

// ErrTooLarge is the error of reading past MaxBody.
var ErrTooLarge = errors.New("egress: the answer is larger than the limit")

// ErrRedirect is returned, wrapped, by CheckStatus for an answer that
// redirects: the policy follows none.
var ErrRedirect = errors.New("egress: the answer redirects, and redirects are not followed")

// Client returns an HTTP client under the policy. trusted are URLs the
// operator configured (a backend's URL): their origins are reached
// whatever their address, and nothing else is. The client keeps no idle
// connection: each request is a fresh one, checked again.
func (p *Policy) Client(trusted ...string) *http.Client {
	if p == nil {
		p = &Policy{}
	}
	g := &guard{allowHosts: map[string]bool{}, origins: map[string]bool{}}
	for _, h := range p.AllowHosts {
		g.allowHosts[strings.ToLower(strings.Trim(h, "[]"))] = true
	}
	for _, t := range trusted {
		if addr, ok := originAddr(t); ok {
			g.origins[addr] = true
		}
	}
	connect := cmp.Or(p.ConnectTimeout, DefaultConnectTimeout)
	g.plain = &net.Dialer{Timeout: connect}
	g.checked = &net.Dialer{Timeout: connect, Control: checkAddress}
	max := p.MaxBody
	if max <= 0 {
		max = DefaultMaxBody
	}
	return &http.Client{
		Timeout: cmp.Or(p.Timeout, DefaultTimeout),
		Transport: capped{max: max, next: &http.Transport{
			Proxy:                  nil,
			DialContext:            g.dial,
			DisableKeepAlives:      true,
			TLSHandshakeTimeout:    connect,
			ResponseHeaderTimeout:  cmp.Or(p.Timeout, DefaultTimeout),
			MaxResponseHeaderBytes: 16 << 10,
			ForceAttemptHTTP2:      true,
		}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// originAddr is the host:port a URL's requests dial.
func originAddr(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", false
	}
	port := u.Port()
	if port == "" {
		switch u.Scheme {
		case "http", "ws":
			port = "80"
		case "https", "wss":
			port = "443"
		default:
			return "", false
		}
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port), true
}

// guard chooses, per connection, whether the address is checked.
type guard struct {
	allowHosts     map[string]bool
	origins        map[string]bool // host:port
	plain, checked *net.Dialer
}

func (g *guard) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if g.origins[strings.ToLower(addr)] || g.allowHosts[strings.ToLower(host)] {
		return g.plain.DialContext(ctx, network, addr)
	}
	return g.checked.DialContext(ctx, network, addr)
}

// checkAddress admits a resolved address only when it is public.
func checkAddress(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !Public(ip) {
		return fmt.Errorf("%w (%s)", ErrRefusedAddress, host)
	}
	return nil
}

// notPublic are the prefixes of addresses that are not global unicast,
// besides those netip names (loopback, private, link-local, multicast,
// unspecified).
var notPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and the broadcast address
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64: any IPv4 address, private ones included
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001::/23"),       // IETF protocol assignments (Teredo among them)
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("2002::/16"),       // 6to4: any IPv4 address
}

// Public reports whether ip is a global unicast address that is in no
// special-purpose range: the only kind the policy reaches unasked.
func Public(ip netip.Addr) bool {
	ip = ip.Unmap() // ::ffff:10.0.0.1 is 10.0.0.1
	if !ip.IsValid() || !ip.IsGlobalUnicast() || ip.IsPrivate() || ip.IsLoopback() || ip.IsLinkLocalUnicast() {
		return false
	}
	for _, p := range notPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// capped bounds every answer's body.
type capped struct {
	max  int64
	next http.RoundTripper
}

func (c capped) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > c.max {
		resp.Body.Close()
		return nil, fmt.Errorf("%w (%d bytes announced, %d allowed)", ErrTooLarge, resp.ContentLength, c.max)
	}
	resp.Body = &cappedBody{rc: resp.Body, left: c.max}
	return resp, nil
}

type cappedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly the limit from a longer one.
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, ErrTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }

// CheckStatus returns ErrRedirect, wrapped and naming the status, for an
// answer that redirects; nil otherwise. Callers that read only 200 need
// not call it: a redirect is then one more status they refuse.
func CheckStatus(resp *http.Response) error {
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return fmt.Errorf("%w (%d)", ErrRedirect, resp.StatusCode)
	}
	return nil
}

// maxSummary bounds a Summary's length, in bytes of its input.
const maxSummary = 96

// Summary is how a value fetched from a third party may be shown: quoted,
// with every control, non-ASCII and markup character escaped, and at most
// maxSummary bytes of it ("…" after the quote when cut).
func Summary(s string) string {
	cut := len(s) > maxSummary
	if cut {
		s = s[:maxSummary]
	}
	q := strconv.QuoteToASCII(s)
	q = strings.NewReplacer("<", `\u003c`, ">", `\u003e`, "&", `\u0026`).Replace(q)
	if cut {
		q += "…"
	}
	return q
}

// Err is err as a fetch may report it: net/http's *url.Error quotes the
// whole URL it failed at, which came from a third party; Err keeps its
// operation and cause and shows the URL as a Summary.
func Err(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	return fmt.Errorf("%s %s: %w", ue.Op, Summary(ue.URL), ue.Err)
}
