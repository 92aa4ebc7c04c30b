package oauthclient

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// readProof checks a proof as a server does (RFC 9449 §4.3): typ
// dpop+jwt, ES256, a public jwk and nothing private, a signature that
// verifies under that jwk; it returns the claims and the jwk's key.
func readProof(t *testing.T, proof string) (jwt.MapClaims, *ecdsa.PublicKey) {
	t.Helper()
	var pub *ecdsa.PublicKey
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(proof, claims, func(tok *jwt.Token) (any, error) {
		if tok.Header["typ"] != "dpop+jwt" {
			t.Errorf("typ %v", tok.Header["typ"])
		}
		jwk, _ := tok.Header["jwk"].(map[string]any)
		if jwk["kty"] != "EC" || jwk["crv"] != "P-256" || jwk["d"] != nil {
			t.Errorf("jwk %v", jwk)
		}
		x, _ := base64.RawURLEncoding.DecodeString(jwk["x"].(string))
		y, _ := base64.RawURLEncoding.DecodeString(jwk["y"].(string))
		var err error
		pub, err = ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		return pub, err
	}, jwt.WithValidMethods([]string{"ES256"}), jwt.WithIssuedAt())
	if err != nil {
		t.Fatalf("the proof does not verify under its own jwk: %v", err)
	}
	return claims, pub
}

// A proof names the method and the URL without query or fragment,
// hashes the token it goes with, carries the nonce given, and is fresh
// each time; the key a record keeps is the key it signs with.
func TestADPoPProofSaysWhatItProves(t *testing.T) {
	stored, err := newDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	key, err := stored.private()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	first, err := dpopProof(key, "POST", "https://mcp.example.com/mcp?x=1#frag", "tok", "n-1", now)
	if err != nil {
		t.Fatal(err)
	}
	claims, pub := readProof(t, first)
	sum := sha256.Sum256([]byte("tok"))
	for k, want := range map[string]any{"htm": "POST", "htu": "https://mcp.example.com/mcp", "nonce": "n-1",
		"ath": base64.RawURLEncoding.EncodeToString(sum[:]), "iat": float64(now.Unix())} {
		if claims[k] != want {
			t.Errorf("%s = %v, want %v", k, claims[k], want)
		}
	}
	if !pub.Equal(&key.PublicKey) {
		t.Error("the jwk is not the record's key")
	}
	second, _ := dpopProof(key, "POST", "https://mcp.example.com/mcp", "", "", now)
	again, _ := readProof(t, second)
	if again["jti"] == claims["jti"] || again["jti"] == "" {
		t.Errorf("two proofs share jti %v", again["jti"])
	}
	if _, has := again["ath"]; has {
		t.Error("a proof for no token carries ath")
	}
	if _, has := again["nonce"]; has {
		t.Error("a proof with no nonce given carries one")
	}
	if _, err := dpopKey("bm90IGEga2V5").private(); err == nil {
		t.Error("a record's unreadable key was taken")
	}
}

// A token request the authorization server answers with use_dpop_nonce
// is sent once more, its body whole, its proof carrying the nonce (RFC
// 9449 §8); another 400 is given back as it came, body and all.
func TestATokenRequestIsRetriedWithTheNonce(t *testing.T) {
	stored, _ := newDPoPKey()
	key, _ := stored.private()
	var mu sync.Mutex
	var proofs, bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		proofs, bodies = append(proofs, r.Header.Get("DPoP")), append(bodies, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.Contains(string(b), "grant_type=other"):
			w.Header().Set("DPoP-Nonce", "n-7") // a nonce, but not the error that asks for it
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"invalid_grant"}`)
		case !strings.Contains(r.Header.Get("DPoP"), ".") || readNonce(r.Header.Get("DPoP")) != "n-7":
			w.Header().Set("DPoP-Nonce", "n-7")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"use_dpop_nonce"}`)
		default:
			_, _ = io.WriteString(w, `{"access_token":"a","token_type":"DPoP"}`)
		}
	}))
	t.Cleanup(srv.Close)
	c := &http.Client{Transport: &dpopTokenTransport{base: http.DefaultTransport, key: key, nonces: &dpopNonces{}, now: time.Now}}
	resp, err := c.PostForm(srv.URL+"/token", url.Values{"grant_type": {"authorization_code"}, "code": {"c"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	if resp.StatusCode != 200 || len(proofs) != 2 || bodies[0] != bodies[1] {
		t.Fatalf("%d after %d requests, bodies %q", resp.StatusCode, len(proofs), bodies)
	}
	if c1, _ := readProof(t, proofs[1]); c1["nonce"] != "n-7" || c1["htu"] != srv.URL+"/token" {
		t.Errorf("the retry's proof: %v", c1)
	}
	proofs = nil
	mu.Unlock()

	resp, err = c.PostForm(srv.URL+"/token", url.Values{"grant_type": {"other"}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if resp.StatusCode != 400 || string(body) != `{"error":"invalid_grant"}` || len(proofs) != 1 {
		t.Errorf("another refusal: %d %s after %d requests", resp.StatusCode, body, len(proofs))
	}
	if readNonce(proofs[0]) != "n-7" {
		t.Error("the nonce the server gave was not sent on the next request")
	}
}

// readNonce is a proof's nonce, unverified.
func readNonce(proof string) string {
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(proof, claims); err != nil {
		return ""
	}
	n, _ := claims["nonce"].(string)
	return n
}

// Towards the backend a DPoP-bound token goes as Authorization: DPoP with
// a proof of the key naming the request and hashing the token; a backend
// that answers use_dpop_nonce gets the request once more — a GET of the
// listening stream as a POST with its body — its proof with the nonce.
func TestABackendsNonceIsAnsweredOnce(t *testing.T) {
	stored, _ := newDPoPKey()
	key, _ := stored.private()
	var mu sync.Mutex
	type seen struct{ method, auth, proof, body string }
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method, r.Header.Get("Authorization"), r.Header.Get("DPoP"), string(b)})
		mu.Unlock()
		if readNonce(r.Header.Get("DPoP")) != "rs-1" {
			w.Header().Set("DPoP-Nonce", "rs-1")
			w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce", error_description="a nonce, please"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	a := &Authorization{Backend: "x", Resource: srv.URL + "/mcp", Env: &ClientEnv{RedirectURL: func() string { return "http://127.0.0.1:1/cb" }}}
	a.rec = record{Token: &tokenSet{Access: "bound-token", DPoP: true}, DPoPKey: stored}
	a.loaded = true
	a.ready.Store(true)
	a.engaged.Store(true)
	c := &http.Client{Transport: a.Wrap(http.DefaultTransport)}

	resp, err := c.Get(srv.URL + "/mcp?session=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("the GET after the nonce: %d", resp.StatusCode)
	}
	resp, err = c.Post(srv.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if resp.StatusCode != 200 || len(got) != 3 { // the GET twice; the POST with the nonce it knows now
		t.Fatalf("the POST: %d after %d requests: %+v", resp.StatusCode, len(got), got)
	}
	sum := sha256.Sum256([]byte("bound-token"))
	for i, g := range got {
		claims, pub := readProof(t, g.proof)
		if g.auth != "DPoP bound-token" || claims["htm"] != g.method || claims["htu"] != srv.URL+"/mcp" ||
			claims["ath"] != base64.RawURLEncoding.EncodeToString(sum[:]) || !pub.Equal(&key.PublicKey) {
			t.Errorf("request %d: %s %q, proof %v", i, g.method, g.auth, claims)
		}
	}
	if got[1].proof == got[0].proof || readNonce(got[1].proof) != "rs-1" || got[2].body != `{"jsonrpc":"2.0","id":1,"method":"ping"}` {
		t.Errorf("the retry: %+v", got)
	}
}

// The client credentials grant binds its tokens too when the server
// offers DPoP: the token request carries a proof, the token goes to the
// backend as Authorization: DPoP with a proof of the same key, and the
// backend's nonce is answered once.
func TestClientCredentialsTokensAreBoundWhenTheServerOffersDPoP(t *testing.T) {
	var mu sync.Mutex
	var asProofs, rsProofs, rsAuth []string
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"resource":"`+srv.URL+`/mcp","authorization_servers":["`+srv.URL+`"]}`)
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"issuer":"`+srv.URL+`","token_endpoint":"`+srv.URL+`/token","dpop_signing_alg_values_supported":["ES256"]}`)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asProofs = append(asProofs, r.Header.Get("DPoP"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"access_token":"cc-bound","token_type":"DPoP","expires_in":3600}`)
	})
	mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		rsProofs, rsAuth = append(rsProofs, r.Header.Get("DPoP")), append(rsAuth, r.Header.Get("Authorization"))
		mu.Unlock()
		if readNonce(r.Header.Get("DPoP")) != "cc-n" {
			w.Header().Set("DPoP-Nonce", "cc-n")
			w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce"`)
			w.WriteHeader(http.StatusUnauthorized)
		}
	})
	c := ClientCredentials{ClientID: "gw", ClientSecret: "s"}.Client(srv.Client(), srv.URL+"/mcp")
	resp, err := c.Post(srv.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if resp.StatusCode != 200 || len(asProofs) != 1 || len(rsProofs) != 2 {
		t.Fatalf("%d; %d token requests, %d backend requests", resp.StatusCode, len(asProofs), len(rsProofs))
	}
	asClaims, asKey := readProof(t, asProofs[0])
	if asClaims["htm"] != "POST" || asClaims["htu"] != srv.URL+"/token" || asClaims["ath"] != nil {
		t.Errorf("the token request's proof: %v", asClaims)
	}
	for i, p := range rsProofs {
		claims, key := readProof(t, p)
		if rsAuth[i] != "DPoP cc-bound" || !key.Equal(asKey) || claims["htu"] != srv.URL+"/mcp" || claims["ath"] == nil {
			t.Errorf("backend request %d: %q, proof %v (the token request's key: %v)", i, rsAuth[i], claims, key.Equal(asKey))
		}
	}
	if readNonce(rsProofs[1]) != "cc-n" {
		t.Error("the retry carries no nonce")
	}
}
