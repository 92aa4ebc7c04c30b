package oauthclient_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth/oauthclient"
	"github.com/mcpgate/mcpgate/internal/h1"
	"github.com/mcpgate/mcpgate/internal/oauthtest"
	"github.com/mcpgate/mcpgate/internal/testkit"
)

// acResource is a backend that demands a bearer token from its issuer:
// a 401 with its resource metadata's URL otherwise, and a 403 asking for
// scope "write" for a request to /mcp/write when the token lacks it.
type acResource struct {
	srv *httptest.Server
	is  *oauthtest.Issuer
	prm map[string]any
	// on401, if set, runs once before the next 401 is answered.
	on401 func()
	// onMetadata, if set, runs at every fetch of the resource metadata.
	onMetadata func()
	mu         sync.Mutex
	got        []string // the bearer tokens it accepted
}

func newACResource(t *testing.T) *acResource {
	t.Helper()
	r := &acResource{is: oauthtest.New(t, "")}
	mux := http.NewServeMux()
	r.srv = httptest.NewServer(mux)
	t.Cleanup(r.srv.Close)
	r.prm = map[string]any{"resource": r.srv.URL + "/mcp", "authorization_servers": []string{r.is.ID}, "scopes_supported": []string{"read"}}
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		if r.onMetadata != nil {
			r.onMetadata()
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		writeJSON(w, r.prm)
	})
	mux.HandleFunc("/mcp/", func(w http.ResponseWriter, req *http.Request) {
		tok, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
		if !ok || tok == "" {
			r.mu.Lock()
			hook := r.on401
			r.on401 = nil
			r.mu.Unlock()
			if hook != nil {
				hook()
			}
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+r.srv.URL+`/.well-known/oauth-protected-resource/mcp", scope="read"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		need := map[string]string{"/mcp/write": "write", "/mcp/never": "read"}[req.URL.Path]
		if need != "" && (req.URL.Path == "/mcp/never" || !slices.Contains(tokenScopes(tok), need)) {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+need+`", resource_metadata="`+r.srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(http.StatusForbidden)
			return
		}
		r.mu.Lock()
		r.got = append(r.got, tok)
		r.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})
	return r
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// tokenScopes reads the scope claim of an issuer's JWT.
func tokenScopes(tok string) []string { return strings.Fields(oauthtest.Claim(tok, "scope")) }

// memRecords is a store's CredentialStore in memory.
type memRecords struct {
	mu sync.Mutex
	m  map[string][]byte
}

var errNoRecord = &url.Error{Op: "none"} // any error the vault is told means none

func (m *memRecords) BackendCredential(_ context.Context, name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if b, ok := m.m[name]; ok {
		return b, nil
	}
	return nil, errNoRecord
}

func (m *memRecords) PutBackendCredential(_ context.Context, name string, sealed []byte, _ time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string][]byte{}
	}
	m.m[name] = bytes.Clone(sealed)
	return nil
}

// UpdateBackendCredential holds the lock through fn, as a store's row
// lock does.
func (m *memRecords) UpdateBackendCredential(_ context.Context, name string, _ time.Time, fn func([]byte) ([]byte, error)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	next, err := fn(m.m[name])
	if err != nil || next == nil {
		return err
	}
	if m.m == nil {
		m.m = map[string][]byte{}
	}
	m.m[name] = bytes.Clone(next)
	return nil
}

var testKey = bytes.Repeat([]byte{7}, 32)

func acVault(t *testing.T, records *memRecords) *oauthclient.SealedVault {
	t.Helper()
	v, err := oauthclient.NewSealedVault(records, testKey, func(err error) bool { return err == errNoRecord })
	if err != nil {
		t.Fatal(err)
	}
	return v
}

type acClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *acClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *acClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func acAuthorization(r *acResource, vault oauthclient.Vault, clock *acClock) *oauthclient.Authorization {
	env := &oauthclient.ClientEnv{RedirectURL: func() string { return "http://127.0.0.1:1/oauth/callback" }, Vault: vault, Now: clock.now, Outbound: loopbackAllowed,
		Logger: slog.New(slog.DiscardHandler)}
	return &oauthclient.Authorization{Backend: "x", Resource: r.srv.URL + "/mcp", Env: env}
}

// get makes one request to the backend through a's transport.
func get(t *testing.T, a *oauthclient.Authorization, url string) int {
	t.Helper()
	c := &http.Client{Transport: a.Wrap(http.DefaultTransport)}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// follow opens the pending link as the admin's browser does and returns
// the query the authorization server redirected to the callback with.
func follow(t *testing.T, link string) url.Values {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil {
		t.Fatalf("the authorization endpoint answered %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	return loc.Query()
}

func TestAuthorizationCodeFlowGetsATokenRefreshesItAndKeepsItSealed(t *testing.T) {
	r := newACResource(t)
	records, clock := &memRecords{}, &acClock{t: time.Now()}
	a := acAuthorization(r, acVault(t, records), clock)
	url := r.srv.URL + "/mcp/x"
	if got := get(t, a, url); got != http.StatusUnauthorized {
		t.Fatalf("before any authorization: %d, want 401", got)
	}
	st := a.Status(context.Background())
	if st.Link == "" || st.Authorized {
		t.Fatalf("status after the 401: %+v, want a link and no token", st)
	}
	link, _ := urlParse(st.Link)
	q := link.Query()
	for k, want := range map[string]string{"response_type": "code", "code_challenge_method": "S256", "resource": r.srv.URL + "/mcp",
		"scope": "read", "redirect_uri": "http://127.0.0.1:1/oauth/callback"} {
		if q.Get(k) != want {
			t.Errorf("the link's %s: %q, want %q", k, q.Get(k), want)
		}
	}
	if get(t, a, url) != http.StatusUnauthorized || a.Status(context.Background()).Link != st.Link {
		t.Error("a second 401 made a new link while the first was still good")
	}
	if err := a.Callback(context.Background(), follow(t, st.Link)); err != nil {
		t.Fatalf("callback: %v", err)
	}
	if got := get(t, a, url); got != http.StatusOK {
		t.Fatalf("after the authorization: %d, want 200", got)
	}
	if st := a.Status(context.Background()); !st.Authorized || st.Link != "" || st.Issuer != r.is.ID {
		t.Errorf("status after the authorization: %+v", st)
	}
	sealed := records.m["x"]
	r.mu.Lock()
	first := r.got[0]
	r.mu.Unlock()
	if len(sealed) == 0 || bytes.Contains(sealed, []byte(first)) || bytes.Contains(sealed, []byte("refresh")) {
		t.Errorf("the stored record holds the token in the clear (or is empty: %d bytes)", len(sealed))
	}

	// Five minutes on, the token is about to expire: it is refreshed
	// before the request, which carries the new one.
	issued := r.is.Issued
	clock.add(5 * time.Minute)
	if got := get(t, a, url); got != http.StatusOK || r.is.Issued != issued+1 {
		t.Fatalf("after expiry: %d and %d tokens issued, want 200 and one refresh", got, r.is.Issued-issued)
	}
	r.mu.Lock()
	if r.got[len(r.got)-1] == first {
		t.Error("the refreshed request carried the old token")
	}
	r.mu.Unlock()

	// A restart: a new Authorization over the same store sends the token
	// it finds there, with no new authorization.
	again := acAuthorization(r, acVault(t, records), clock)
	if got := get(t, again, url); got != http.StatusOK {
		t.Errorf("after a restart: %d, want 200 with the stored token", got)
	}
}

// A POST sent as its parts (the relay's upstream POST through
// internal/h1) meets the flow as a request does: its 401 makes the link,
// and once authorized it carries the token.
func TestAPostSentAsItsPartsMeetsTheFlowAsARequestDoes(t *testing.T) {
	r := newACResource(t)
	a := acAuthorization(r, &oauthclient.MemoryVault{}, &acClock{t: time.Now()})
	base := h1.New(http.DefaultTransport.(*http.Transport).Clone())
	defer base.CloseIdleConnections()
	tr, ok := a.Wrap(base).(h1.Poster)
	if !ok {
		t.Fatal("the authorization's transport cannot send a POST as its parts")
	}
	u, _ := url.Parse(r.srv.URL + "/mcp/x")
	post := func() int {
		resp, err := tr.Post(context.Background(), u, http.Header{"Content-Type": {"application/json"}}, h1.Body{[]byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := post(); got != http.StatusUnauthorized {
		t.Fatalf("before any authorization: %d, want 401", got)
	}
	st := a.Status(context.Background())
	if st.Link == "" {
		t.Fatalf("status after the POST's 401: %+v, want a link", st)
	}
	if err := a.Callback(context.Background(), follow(t, st.Link)); err != nil {
		t.Fatalf("callback: %v", err)
	}
	if got := post(); got != http.StatusOK {
		t.Fatalf("after the authorization: %d, want 200", got)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got) != 1 || r.got[0] == "" {
		t.Errorf("tokens the backend accepted: %q, want the one issued", r.got)
	}
}

// TestStepUpAsksForTheScopesHeldAndChallengedAndNeverLoops: a 403
// insufficient_scope makes a link for the scopes granted and the one
// challenged together (SEP-2350); a backend that refuses a token holding
// the very scope it asks for is not asked for again.
func TestStepUpAsksForTheScopesHeldAndChallengedAndNeverLoops(t *testing.T) {
	r := newACResource(t)
	a := acAuthorization(r, &oauthclient.MemoryVault{}, &acClock{t: time.Now()})
	ctx := context.Background()
	get(t, a, r.srv.URL+"/mcp/x")
	if err := a.Callback(ctx, follow(t, a.Status(ctx).Link)); err != nil {
		t.Fatal(err)
	}
	if got := get(t, a, r.srv.URL+"/mcp/write"); got != http.StatusForbidden {
		t.Fatalf("write with a read token: %d, want 403", got)
	}
	st := a.Status(ctx)
	link, _ := url.Parse(st.Link)
	if got := link.Query().Get("scope"); got != "read write" {
		t.Fatalf("the step-up link asks for %q, want \"read write\"", got)
	}
	if !st.Authorized || get(t, a, r.srv.URL+"/mcp/x") != http.StatusOK {
		t.Error("the read token was dropped while the step-up waits")
	}
	if err := a.Callback(ctx, follow(t, st.Link)); err != nil {
		t.Fatal(err)
	}
	if got := get(t, a, r.srv.URL+"/mcp/write"); got != http.StatusOK {
		t.Fatalf("write after the step-up: %d, want 200", got)
	}
	issued := r.is.Issued
	for range 3 {
		if got := get(t, a, r.srv.URL+"/mcp/never"); got != http.StatusForbidden {
			t.Fatalf("never: %d", got)
		}
	}
	if st := a.Status(ctx); st.Link != "" || !strings.Contains(st.Failure, "not asking the admin again") || r.is.Issued != issued {
		t.Errorf("after refusals of a token holding the scope: %+v", st)
	}
}

// Two replicas over one store whose token expires together refresh it
// once: the second finds the first's new token instead of presenting the
// refresh token the server rotated away.
func TestReplicasRefreshTheTokenOnce(t *testing.T) {
	r := newACResource(t)
	records, clock := &memRecords{}, &acClock{t: time.Now()}
	a := acAuthorization(r, acVault(t, records), clock)
	url := r.srv.URL + "/mcp/x"
	get(t, a, url)
	if err := a.Callback(context.Background(), follow(t, a.Status(context.Background()).Link)); err != nil {
		t.Fatal(err)
	}
	b := acAuthorization(r, acVault(t, records), clock) // another replica
	if get(t, a, url) != http.StatusOK || get(t, b, url) != http.StatusOK {
		t.Fatal("the replicas do not send the token")
	}
	issued := r.is.Issued
	clock.add(5 * time.Minute)
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Go(func() {
			c := &http.Client{Transport: []*oauthclient.Authorization{a, b}[i%2].Wrap(http.DefaultTransport)}
			resp, err := c.Get(url)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			codes[i] = resp.StatusCode
		})
	}
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusOK {
			t.Errorf("request %d: %d", i, c)
		}
	}
	if got := r.is.Issued - issued; got != 1 {
		t.Errorf("%d refreshes at the token endpoint, want 1", got)
	}
}

// countingVault counts the vault's loads.
type countingVault struct {
	oauthclient.MemoryVault
	loads atomic.Int64
}

func (v *countingVault) Load(ctx context.Context, backend string) ([]byte, error) {
	v.loads.Add(1)
	return v.MemoryVault.Load(ctx, backend)
}

// A backend that never asks for OAuth costs its requests no read of the
// vault (the store) after the first.
func TestABackendThatNeverAsksReadsTheVaultOnce(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(srv.Close)
	v := &countingVault{}
	a := &oauthclient.Authorization{Backend: "plain", Resource: srv.URL + "/mcp", Env: &oauthclient.ClientEnv{Outbound: loopbackAllowed,
		RedirectURL: func() string { return "http://127.0.0.1:1/oauth/callback" }, Vault: v, Logger: slog.New(slog.DiscardHandler)}}
	for range 20 {
		if got := get(t, a, srv.URL+"/mcp"); got != http.StatusOK {
			t.Fatalf("a plain backend: %d", got)
		}
	}
	if n := v.loads.Load(); n != 1 {
		t.Errorf("20 requests read the vault %d times, want once", n)
	}
}

// A replica that sent no token, refused while another replica finished
// the admin's authorization, takes the token that is in the store now:
// it neither drops it nor asks the admin again.
func TestAReplicaRefusedWithoutATokenTakesTheOneInTheStore(t *testing.T) {
	r := newACResource(t)
	records, clock := &memRecords{}, &acClock{t: time.Now()}
	a := acAuthorization(r, acVault(t, records), clock)
	b := acAuthorization(r, acVault(t, records), clock)
	url := r.srv.URL + "/mcp/x"
	get(t, a, url)
	q := follow(t, a.Status(context.Background()).Link)
	r.mu.Lock()
	r.on401 = func() { // while b's token-less request is being refused
		if err := a.Callback(context.Background(), q); err != nil {
			t.Error(err)
		}
	}
	r.mu.Unlock()
	if got := get(t, b, url); got != http.StatusUnauthorized {
		t.Fatalf("b's request: %d, want the 401 it was sent", got)
	}
	if st := b.Status(context.Background()); !st.Authorized || st.Link != "" {
		t.Fatalf("after b's refusal: %+v, want a's token kept and no new link", st)
	}
	if got := get(t, b, url); got != http.StatusOK {
		t.Errorf("b's next request: %d, want 200 with a's token", got)
	}
}

func urlParse(s string) (*url.URL, error) { return url.Parse(s) }

// TestCallbackRefusesWhatItShould: each bad answer is refused, leaves the
// gateway without a token, and never reaches the token endpoint.
func TestCallbackRefusesWhatItShould(t *testing.T) {
	for _, tc := range []struct {
		name   string
		meta   map[string]any // added to the issuer's metadata
		mangle func(q url.Values, clock *acClock)
		want   string
	}{
		{"AnotherState", nil, func(q url.Values, _ *acClock) { q.Set("state", q.Get("state")+"x") }, "not one this gateway made"},
		{"AStateOfAnotherBackend", nil, func(q url.Values, _ *acClock) {
			q.Set("state", "eQ."+strings.SplitN(q.Get("state"), ".", 2)[1])
		}, "not one this gateway made"},
		{"AForgedStateOfTheRightShape", nil, func(q url.Values, _ *acClock) {
			q.Set("state", "eA."+base64.RawURLEncoding.EncodeToString(make([]byte, 32)))
		}, "not one this gateway made"},
		{"NoState", nil, func(q url.Values, _ *acClock) { q.Del("state") }, "not one this gateway made"},
		{"AnIssOfAnotherServer", nil, func(q url.Values, _ *acClock) { q.Set("iss", "https://evil.example.com") }, "is not the authorization server's issuer"},
		{"AnIssWithATrailingSlash", nil, func(q url.Values, _ *acClock) { q.Set("iss", q.Get("iss")+"/") }, "is not the authorization server's issuer"},
		{"NoIssFromAServerThatSendsIt", map[string]any{"authorization_response_iss_parameter_supported": true},
			func(q url.Values, _ *acClock) { q.Del("iss") }, "carries no iss"},
		{"AnError", nil, func(q url.Values, _ *acClock) { q.Del("code"); q.Set("error", "access_denied") }, `answered "access_denied"`},
		{"AnExpiredLink", nil, func(_ url.Values, c *acClock) { c.add(16 * time.Minute) }, "expired"},
		{"NoCode", nil, func(q url.Values, _ *acClock) { q.Del("code") }, "no code"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newACResource(t)
			for k, v := range tc.meta {
				r.is.Metadata[k] = v
			}
			clock := &acClock{t: time.Now()}
			a := acAuthorization(r, &oauthclient.MemoryVault{}, clock)
			get(t, a, r.srv.URL+"/mcp/x")
			q := follow(t, a.Status(context.Background()).Link)
			q.Set("iss", r.is.ID)
			tc.mangle(q, clock)
			err := a.Callback(context.Background(), q)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("callback: %v, want %q", err, tc.want)
			}
			if st := a.Status(context.Background()); st.Authorized || r.is.Issued != 0 {
				t.Errorf("after a refused callback: %+v, %d tokens issued", st, r.is.Issued)
			}
		})
	}
	t.Run("TheSameAnswerTwice", func(t *testing.T) {
		r := newACResource(t)
		a := acAuthorization(r, &oauthclient.MemoryVault{}, &acClock{t: time.Now()})
		get(t, a, r.srv.URL+"/mcp/x")
		q := follow(t, a.Status(context.Background()).Link)
		if err := a.Callback(context.Background(), q); err != nil {
			t.Fatal(err)
		}
		if err := a.Callback(context.Background(), q); err == nil || !strings.Contains(err.Error(), "no authorization is waiting") {
			t.Errorf("the answer again: %v, want it refused", err)
		}
	})
}

// A callback whose state the gateway did not sign is refused before the
// record is read (the callback is anybody's to call: a flood of bogus
// answers must not become a flood of store reads); one it signed but that
// is not the waiting one is refused after. Replicas with one StateKey
// take each other's states.
func TestAnUnsignedStateIsRefusedWithoutAStoreRead(t *testing.T) {
	r := newACResource(t)
	vault := &countingVault{}
	a := acAuthorization(r, vault, &acClock{t: time.Now()})
	get(t, a, r.srv.URL+"/mcp/x")
	q := follow(t, a.Status(context.Background()).Link)
	before := vault.loads.Load()
	forged := url.Values{"state": {"eA." + base64.RawURLEncoding.EncodeToString(make([]byte, 32))}, "code": {"c"}, "iss": {r.is.ID}}
	for range 100 {
		if err := a.Callback(context.Background(), forged); err == nil {
			t.Fatal("a forged state was taken")
		}
	}
	if n := vault.loads.Load() - before; n != 0 {
		t.Errorf("100 forged callbacks read the vault %d times, want 0", n)
	}

	// Another Authorization of the same backend and vault — another
	// replica — with its own key of the process refuses the state; with
	// the same StateKey, it completes the authorization.
	other := acAuthorization(r, vault, &acClock{t: time.Now()})
	if err := other.Callback(context.Background(), q); err == nil || !strings.Contains(err.Error(), "not one this gateway made") {
		t.Fatalf("a replica with another state key: %v", err)
	}

	r2 := newACResource(t)
	vault2 := &countingVault{}
	shared := []byte("a state key both replicas derive from one vault key")
	replica := func() *oauthclient.Authorization {
		x := acAuthorization(r2, vault2, &acClock{t: time.Now()})
		x.Env.StateKey = shared
		return x
	}
	first, second := replica(), replica()
	get(t, first, r2.srv.URL+"/mcp/x")
	if err := second.Callback(context.Background(), follow(t, first.Status(context.Background()).Link)); err != nil {
		t.Fatalf("a replica with the shared state key: %v", err)
	}
	if st := second.Status(context.Background()); !st.Authorized {
		t.Errorf("after the other replica's callback: %+v", st)
	}
}

// Two replicas refused at once both discover and make a link; the second
// to store it finds the first's and takes it instead, so both show (and
// log) one link, and the admin's answer to it completes on either.
func TestReplicasChallengedAtOnceShowOneLink(t *testing.T) {
	r := newACResource(t)
	var both sync.WaitGroup
	both.Add(2)
	r.onMetadata = func() { both.Done(); both.Wait() } // each has loaded no link before either stores one
	vault := acVault(t, &memRecords{})
	clock := &acClock{t: time.Now()}
	var logs [2]*testkit.Output
	var replicas [2]*oauthclient.Authorization
	for i := range replicas {
		logs[i] = &testkit.Output{}
		replicas[i] = acAuthorization(r, vault, clock)
		replicas[i].Env.Logger = slog.New(slog.NewJSONHandler(logs[i], nil))
		replicas[i].Env.StateKey = []byte("the replicas' state key")
	}
	var wg sync.WaitGroup
	for _, a := range replicas {
		wg.Go(func() { get(t, a, r.srv.URL+"/mcp/x") })
	}
	wg.Wait()
	r.onMetadata = nil
	first, second := replicas[0].Status(context.Background()).Link, replicas[1].Status(context.Background()).Link
	if first == "" || first != second {
		t.Fatalf("the replicas show two links:\n%s\n%s", first, second)
	}
	for i, l := range logs {
		for _, line := range strings.Split(strings.TrimSpace(l.String()), "\n") {
			var rec struct{ Open string }
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Open != "" && rec.Open != first {
				t.Errorf("replica %d logged another link than the one both show: %s", i, rec.Open)
			}
		}
	}
	if err := replicas[1].Callback(context.Background(), follow(t, first)); err != nil {
		t.Fatalf("the answer to the one link: %v", err)
	}
	if got := get(t, replicas[0], r.srv.URL+"/mcp/x"); got != http.StatusOK {
		t.Errorf("the other replica's next request: %d, want 200", got)
	}
}

// An admin's Forget drops the backend's tokens — the refresh token
// revoked at the authorization server first — and the sealed record
// keeps only the client's registration: the next request goes without a
// token, and its refusal makes a new link for the same client.
func TestForgetDropsTheTokensAndRevokesThem(t *testing.T) {
	r := newACResource(t)
	r.prm["scopes_supported"] = []string{"read", "offline_access"}
	r.is.Metadata["scopes_supported"] = []string{"read", "offline_access"}
	records := &memRecords{}
	a := acAuthorization(r, acVault(t, records), &acClock{t: time.Now()})
	get(t, a, r.srv.URL+"/mcp/x")
	first := a.Status(context.Background()).Link
	if err := a.Callback(context.Background(), follow(t, first)); err != nil {
		t.Fatal(err)
	}
	if got := get(t, a, r.srv.URL+"/mcp/x"); got != http.StatusOK {
		t.Fatalf("authorized: %d", got)
	}
	had, err := a.Forget(context.Background())
	if !had || err != nil {
		t.Fatalf("Forget: %v, %v", had, err)
	}
	if revoked := r.is.RevokedTokens(); len(revoked) != 1 || revoked[0] == "" {
		t.Errorf("the authorization server was sent %q to revoke, want the refresh token", revoked)
	}
	if st := a.Status(context.Background()); st.Authorized || st.Link != "" {
		t.Errorf("after Forget: %+v", st)
	}
	if got := get(t, a, r.srv.URL+"/mcp/x"); got != http.StatusUnauthorized {
		t.Errorf("the next request: %d, want 401 (no token sent)", got)
	}
	again := a.Status(context.Background()).Link
	clientOf := func(link string) string { u, _ := url.Parse(link); return u.Query().Get("client_id") }
	if again == "" || again == first || clientOf(again) != clientOf(first) {
		t.Errorf("the new link %q, the first %q: want another link for the same client", again, first)
	}
	if had, err := a.Forget(context.Background()); had || err != nil {
		t.Errorf("Forget with no token: %v, %v", had, err)
	}
}

// TestDiscoveryRefusesWhatItShould: metadata that would send the token
// elsewhere, or name another issuer, or offer no S256, stops the flow
// before any link is made.
func TestDiscoveryRefusesWhatItShould(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(r *acResource)
		want   string
	}{
		{"AResourceOfAnotherOrigin", func(r *acResource) { r.prm["resource"] = "https://evil.example.com/mcp" }, "which is not it"},
		{"AResourceOfAnotherPath", func(r *acResource) { r.prm["resource"] = r.srv.URL + "/other" }, "which is not it"},
		{"AnIssuerItsMetadataDoesNotName", func(r *acResource) { r.is.Metadata["issuer"] = "https://attacker.example.com" }, "must be equal"},
		{"NoS256", func(r *acResource) { r.is.Metadata["code_challenge_methods_supported"] = []string{"plain"} }, "S256"},
		{"NoWayToRegister", func(r *acResource) { delete(r.is.Metadata, "registration_endpoint") }, "neither Client ID Metadata Documents"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newACResource(t)
			tc.change(r)
			a := acAuthorization(r, &oauthclient.MemoryVault{}, &acClock{t: time.Now()})
			get(t, a, r.srv.URL+"/mcp/x")
			st := a.Status(context.Background())
			if st.Link != "" || !strings.Contains(st.Failure, tc.want) {
				t.Errorf("status: %+v, want no link and a failure naming %q", st, tc.want)
			}
		})
	}
}

func TestResourceCovers(t *testing.T) {
	for _, tc := range []struct {
		resource, server string
		want             bool
	}{
		{"https://a.example/mcp", "https://a.example/mcp", true},
		{"https://a.example/mcp/", "https://a.example/mcp", true},
		{"https://a.example", "https://a.example/mcp", true},
		{"https://a.example/", "https://a.example/mcp", true},
		{"https://A.example/mcp", "https://a.example/mcp", true},
		{"https://a.example/mc", "https://a.example/mcp", false},
		{"https://a.example/mcp/x", "https://a.example/mcp", false},
		{"https://b.example/mcp", "https://a.example/mcp", false},
		{"http://a.example/mcp", "https://a.example/mcp", false},
		{"https://a.example:444/mcp", "https://a.example/mcp", false},
		{"https://a.example/mcp#f", "https://a.example/mcp", false},
		{"https://a.example/mcp?q=1", "https://a.example/mcp", false},
		{"", "https://a.example/mcp", false},
	} {
		if got := oauthclient.ResourceCovers(tc.resource, tc.server); got != tc.want {
			t.Errorf("ResourceCovers(%q, %q) = %v, want %v", tc.resource, tc.server, got, tc.want)
		}
	}
}

func TestSealedVaultRefusesAnotherKeyAnotherBackendAndAlteration(t *testing.T) {
	records := &memRecords{}
	v := acVault(t, records)
	if err := v.Save(context.Background(), "x", []byte(`{"token":"secret"}`)); err != nil {
		t.Fatal(err)
	}
	if got, err := v.Load(context.Background(), "x"); err != nil || string(got) != `{"token":"secret"}` {
		t.Fatalf("load: %q %v", got, err)
	}
	if got, err := v.Load(context.Background(), "none"); err != nil || got != nil {
		t.Errorf("a backend without a record: %q %v, want nothing", got, err)
	}
	other, _ := oauthclient.NewSealedVault(records, bytes.Repeat([]byte{8}, 32), nil)
	if _, err := other.Load(context.Background(), "x"); err == nil {
		t.Error("another key opened the record")
	}
	records.m["y"] = records.m["x"] // moved to another backend
	if _, err := v.Load(context.Background(), "y"); err == nil {
		t.Error("a record moved to another backend opened")
	}
	records.m["x"][len(records.m["x"])-1] ^= 1
	if _, err := v.Load(context.Background(), "x"); err == nil {
		t.Error("an altered record opened")
	}
	if _, err := oauthclient.NewSealedVault(records, []byte("short"), nil); err == nil {
		t.Error("a 5-byte key was taken")
	}
}
