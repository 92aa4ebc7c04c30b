package loopback

import "testing"

func TestHostIsThisMachineOnly(t *testing.T) {
	for _, tc := range []struct {
		rule, host string
		want       bool
	}{
		{"localhost is this machine", "localhost", true},
		{"in any case", "LocalHost", true},
		{"all of 127.0.0.0/8", "127.8.9.10", true},
		{"IPv6 loopback", "::1", true},
		{"IPv6 loopback in brackets", "[::1]", true},
		{"IPv4 loopback mapped into IPv6", "::ffff:127.0.0.1", true},
		{"a private address is not", "10.0.0.1", false},
		{"every interface is not", "0.0.0.0", false},
		{"the IPv6 unspecified address is not", "::", false},
		{"a public address is not", "8.8.8.8", false},
		{"a name under localhost is not taken on trust", "evil.localhost.example.com", false},
		{"a name that resolves somewhere is not", "example.com", false},
		{"an address with leading zeros is not one", "127.000.000.001", false},
		{"empty is not", "", false},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			if got := Host(tc.host); got != tc.want {
				t.Errorf("Host(%q) = %v, want %v", tc.host, got, tc.want)
			}
		})
	}
}

func TestAddrReadsTheHostOfHostPort(t *testing.T) {
	for _, tc := range []struct {
		rule, addr string
		want       bool
	}{
		{"loopback with a port", "127.0.0.1:8080", true},
		{"bracketed IPv6 with a port", "[::1]:0", true},
		{"localhost with a port", "localhost:9", true},
		{"every interface", ":8080", false},
		{"no port is not an address", "127.0.0.1", false},
		{"a public host", "example.com:443", false},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			if got := Addr(tc.addr); got != tc.want {
				t.Errorf("Addr(%q) = %v, want %v", tc.addr, got, tc.want)
			}
		})
	}
}

func TestHostMakesNoAllocation(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { Host("127.0.0.1") }); n != 0 {
		t.Errorf("Host made %v allocations", n)
	}
}
