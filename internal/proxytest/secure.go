// secure.go serves a proxy as one that leaves its host should be served:
// wss:// with a certificate of a test CA, mutual TLS, a bearer token. It
// makes the PEM files of that CA, of another CA, and of clients of each.

package proxytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/proxy"
)

// PKI are the PEM files of a test's certificates: a CA, the proxy's
// certificate for 127.0.0.1 signed by it, a client certificate signed by
// it, and another CA with a client certificate of its own.
type PKI struct {
	CA, ServerCert, ServerKey, ClientCert, ClientKey string
	OtherCA, OtherClientCert, OtherClientKey         string
}

// NewPKI writes a fresh PKI into a temporary folder of tb's.
func NewPKI(tb testing.TB) PKI {
	tb.Helper()
	dir := tb.TempDir()
	write := func(name string, block *pem.Block) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(block), 0o600); err != nil {
			tb.Fatal(err)
		}
		return p
	}
	var serial int64
	issue := func(name string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, ca bool, usage x509.ExtKeyUsage) (*x509.Certificate, *ecdsa.PrivateKey, string, string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			tb.Fatal(err)
		}
		serial++
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: ca}
		if ca {
			tmpl.KeyUsage |= x509.KeyUsageCertSign
		} else {
			tmpl.ExtKeyUsage = []x509.ExtKeyUsage{usage}
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		}
		if parent == nil {
			parent, parentKey = tmpl, key
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
		if err != nil {
			tb.Fatal(err)
		}
		cert, _ := x509.ParseCertificate(der)
		kb, _ := x509.MarshalECPrivateKey(key)
		return cert, key, write(name+".pem", &pem.Block{Type: "CERTIFICATE", Bytes: der}),
			write(name+"-key.pem", &pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
	}
	var p PKI
	ca, caKey, caFile, _ := issue("ca", nil, nil, true, 0)
	other, otherKey, otherFile, _ := issue("other-ca", nil, nil, true, 0)
	p.CA, p.OtherCA = caFile, otherFile
	_, _, p.ServerCert, p.ServerKey = issue("proxy", ca, caKey, false, x509.ExtKeyUsageServerAuth)
	_, _, p.ClientCert, p.ClientKey = issue("gateway", ca, caKey, false, x509.ExtKeyUsageClientAuth)
	_, _, p.OtherClientCert, p.OtherClientKey = issue("stranger", other, otherKey, false, x509.ExtKeyUsageClientAuth)
	return p
}

// ServeSecure serves a proxy in front of up over wss:// with pki's
// certificate, admitting only clients with a certificate of pki's CA, and
// only requests that carry token; it returns the wss:// URL. Closed when
// tb ends.
func ServeSecure(tb testing.TB, up *proxy.Upstream, pki PKI, token string) string {
	tb.Helper()
	cfg, err := proxy.TLSConfig(pki.ServerCert, pki.ServerKey, pki.CA)
	if err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: proxy.NewServer(proxy.Options{Upstream: up, InfoPath: filepath.Join(tb.TempDir(), "none"), Token: []byte(token)})}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(tls.NewListener(ln, cfg)) }()
	tb.Cleanup(func() { _ = srv.Close(); <-done })
	return "wss://" + ln.Addr().String()
}
