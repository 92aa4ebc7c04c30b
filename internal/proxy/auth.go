// auth.go closes the wire when it leaves the host. The seed's wire is plain
// ws:// without authentication, inside a container network. A proxy on
// another host (a pod in a cluster) is reached by whoever reaches its port.
// They may list and call every tool, and read the Secrets feed in clear. A
// proxy given a token refuses every request that does not carry it; given a
// certificate it speaks wss://, and given a client CA it admits only
// clients with a certificate of that CA (mutual TLS). With none of these,
// the seed's form is served as it was.

package proxy

import (
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/mcpgate/mcpgate/internal/auth/bearer"
)

// tokenDigest is what a token is compared by: digests of equal length,
// so that the comparison takes the same time whatever is presented.
func tokenDigest(token []byte) []byte {
	if len(token) == 0 {
		return nil
	}
	sum := sha256.Sum256(token)
	return sum[:]
}

// authorized reports whether r carries the wire's token, in constant
// time; true when no token is asked.
func (s *Server) authorized(r *http.Request) bool {
	if s.token == nil {
		return true
	}
	cred, err := bearer.Token(r.Header)
	if err != nil {
		return false
	}
	sum := sha256.Sum256([]byte(cred))
	return subtle.ConstantTimeCompare(sum[:], s.token) == 1
}

// TLSConfig is the proxy's TLS: its certificate and key (PEM files), and,
// with clientCA, mutual TLS: a client is admitted only with a certificate
// that CA signed. Errors name the file, never its content.
func TLSConfig(certFile, keyFile, clientCA string) (*tls.Config, error) {
	if certFile == "" || keyFile == "" {
		return nil, errors.New("proxy: TLS needs both a certificate and its key")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("proxy: the certificate %s or its key %s: %w", certFile, keyFile, err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCA != "" {
		pool, err := CertPool(clientCA)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// CertPool reads the PEM certificates of file into a pool.
func CertPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("proxy: the CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("proxy: the CA file %s holds no PEM certificate", file)
	}
	return pool, nil
}
