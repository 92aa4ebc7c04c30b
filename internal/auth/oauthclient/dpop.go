// dpop.go binds a backend's tokens to a key of the gateway's (DPoP, RFC
// 9449; MCP's SEP-1932). The authorization server may say it takes DPoP
// proofs. Then every token request and every request to the backend carries
// a fresh proof: a JWT signed with that key, naming the method and URL,
// and, towards the backend, a hash of the token. A token that leaks is of
// no use without the key. A server that asks for a nonce (use_dpop_nonce)
// gets the request again, once, with the nonce it sent.
//
// For the authorization code grant the key is part of the backend's sealed
// record, so that every replica proves possession of the one key its token
// is bound to. For client credentials, whose tokens live in memory, so does
// the key (client.go).

package oauthclient

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgate/mcpgate/internal/auth/oauthmeta"
)

// dpopAlg is the one proof alg the gateway signs with.
const dpopAlg = "ES256"

// offersDPoP reports whether as takes proofs the gateway can sign.
func offersDPoP(as oauthmeta.ServerMetadata) bool {
	return slices.Contains(as.DPoPSigningAlgValuesSupported, dpopAlg)
}

// dpopKey is a P-256 key in a record: PKCS #8, base64.
type dpopKey string

func newDPoPKey() (dpopKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return "", err
	}
	return dpopKey(base64.RawStdEncoding.EncodeToString(der)), nil
}

func (k dpopKey) private() (*ecdsa.PrivateKey, error) {
	der, err := base64.RawStdEncoding.DecodeString(string(k))
	if err != nil {
		return nil, errors.New("oauth: the DPoP key in the record is unreadable")
	}
	key, err := x509.ParsePKCS8PrivateKey(der)
	ec, ok := key.(*ecdsa.PrivateKey)
	if err != nil || !ok {
		return nil, errors.New("oauth: the DPoP key in the record is not a P-256 key")
	}
	return ec, nil
}

// dpopProof is a proof for method at target (its query and fragment cut,
// §4.2), for accessToken when it is not "" (ath, §4.3), with nonce when
// the server gave one.
func dpopProof(key *ecdsa.PrivateKey, method, target, accessToken, nonce string, now time.Time) (string, error) {
	u, err := url.Parse(target)
	if err != nil {
		return "", err
	}
	u.RawQuery, u.Fragment, u.RawFragment = "", "", ""
	claims := jwt.MapClaims{"jti": rand.Text(), "htm": method, "htu": u.String(), "iat": now.Unix()}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	t := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	t.Header["typ"] = "dpop+jwt"
	size := (key.Curve.Params().BitSize + 7) / 8
	pub, err := key.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		return "", err
	}
	t.Header["jwk"] = map[string]string{"kty": "EC", "crv": "P-256",
		"x": base64.RawURLEncoding.EncodeToString(pub[1 : 1+size]), "y": base64.RawURLEncoding.EncodeToString(pub[1+size:])}
	return t.SignedString(key)
}

// dpopNonces are the nonces servers gave, by origin (§8, §9): each is
// sent until the server gives another.
type dpopNonces struct {
	mu sync.Mutex
	m  map[string]string
}

func origin(target string) string {
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	return u.Scheme + "://" + u.Host
}

func (n *dpopNonces) get(target string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.m[origin(target)]
}

// note keeps the nonce resp carries, if any; it reports whether there was one.
func (n *dpopNonces) note(target string, resp *http.Response) bool {
	v := resp.Header.Get("DPoP-Nonce")
	if v == "" {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.m == nil {
		n.m = map[string]string{}
	}
	n.m[origin(target)] = v
	return true
}

// dpopTokenTransport gives every token request a proof, and repeats one
// that the authorization server answered with use_dpop_nonce (§8).
type dpopTokenTransport struct {
	base   http.RoundTripper
	key    *ecdsa.PrivateKey
	nonces *dpopNonces
	now    func() time.Time
}

func (t *dpopTokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	target := req.URL.String()
	send := func(r *http.Request) (*http.Response, error) {
		proof, err := dpopProof(t.key, r.Method, target, "", t.nonces.get(target), t.now())
		if err != nil {
			return nil, err
		}
		r = r.Clone(r.Context())
		r.Header.Set("DPoP", proof)
		resp, err := t.base.RoundTrip(r)
		if err == nil {
			t.nonces.note(target, resp)
		}
		return resp, err
	}
	resp, err := send(req)
	if err != nil || resp.StatusCode != http.StatusBadRequest || resp.Header.Get("DPoP-Nonce") == "" || req.GetBody == nil {
		return resp, err
	}
	// The error is in the body: read it, and give it back if it is another.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	if !jsonHasError(body, "use_dpop_nonce") {
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	again, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	retry := req.Clone(req.Context())
	retry.Body = again
	return send(retry)
}

// jsonHasError reports whether body is an OAuth error response of code.
func jsonHasError(body []byte, code string) bool {
	var e struct {
		Error string `json:"error"`
	}
	return json.Unmarshal(body, &e) == nil && e.Error == code
}

// sendToken sends req with token ("": none) — as a bearer token, or with
// key as a DPoP token and a fresh proof of its possession (RFC 9449
// §7.1), noting in nonces the nonce the server gives.
func sendToken(base http.RoundTripper, req *http.Request, token string, key *ecdsa.PrivateKey, nonces *dpopNonces, now time.Time) (*http.Response, error) {
	if token == "" {
		return base.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	if key == nil {
		r.Header.Set("Authorization", "Bearer "+token)
		return base.RoundTrip(r)
	}
	target := req.URL.String()
	proof, err := dpopProof(key, req.Method, target, token, nonces.get(target), now)
	if err != nil {
		return nil, err
	}
	r.Header.Set("Authorization", "DPoP "+token)
	r.Header.Set("DPoP", proof)
	resp, err := base.RoundTrip(r)
	if err == nil {
		nonces.note(target, resp)
	}
	return resp, err
}

// replayBody is req's body to send once more: none, or a fresh copy;
// false when it cannot be read again.
func replayBody(req *http.Request) (io.ReadCloser, bool) {
	switch {
	case req.GetBody != nil:
		body, err := req.GetBody()
		return body, err == nil
	case req.Body != nil && req.Body != http.NoBody:
		return nil, false
	}
	return http.NoBody, true
}
