// Package loopback says whether a host stays on this machine. The gateway
// asks it of a listen address before it serves without authentication or
// profiles, of a redirect URI or an issuer before it allows plain http,
// and of every request's Host header (DNS-rebinding protection).
package loopback

import (
	"net"
	"net/netip"
	"strings"
)

// Host reports whether host names this machine: "localhost" in any case,
// or a loopback address (127.0.0.0/8 or ::1, IPv4 also mapped into IPv6),
// with or without brackets. It makes no allocation: the Streamable HTTP
// guard asks it of every request.
func Host(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// Addr is Host for the host of a host:port address; false when addr is
// not one.
func Addr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && Host(host)
}
