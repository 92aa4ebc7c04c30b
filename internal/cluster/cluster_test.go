// cluster_test.go runs the shared state against a real Redis
// (internal/peers starts one): exact bursts across replicas on the
// server's clock, token events applied at once and caught up from the
// store after a miss, and sealed sessions whose liveness and per-identity
// cap every replica sees.

package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpgate/mcpgate/internal/auth"
	"github.com/mcpgate/mcpgate/internal/cluster"
	"github.com/mcpgate/mcpgate/internal/gateway/catalogue"
	"github.com/mcpgate/mcpgate/internal/peers"
	"github.com/mcpgate/mcpgate/internal/policy"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func open(t *testing.T, srv peers.RedisServer) *cluster.Redis {
	t.Helper()
	r, err := cluster.Open(context.Background(), cluster.Options{URL: srv.URL(), Prefix: "t:" + t.Name() + ":"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func TestURLWithAPasswordIsRefusedWithoutQuotingIt(t *testing.T) {
	for _, u := range []string{"redis://:hunter2@127.0.0.1:6379/0", "redis://u:hunter2@h/0"} {
		_, err := cluster.ParseURL(u)
		if !errors.Is(err, cluster.ErrPasswordInURL) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%v", err)
		}
	}
	if _, err := cluster.ParseURL("http://h:1/0"); err == nil {
		t.Error("an http URL accepted")
	}
	if _, err := cluster.ParseURL("redis://127.0.0.1:6379/0"); err != nil {
		t.Error(err)
	}
}

func TestBurstAcrossReplicasAdmitsExactlyBurst(t *testing.T) {
	srv := peers.StartRedis(t)
	rules := policy.LimitRules{Default: policy.Limit{Rate: 0.01, Burst: 10}}
	var replicas []*policy.Limiter
	for range 3 {
		replicas = append(replicas, policy.NewLimiter(rules, nil).WithShared(open(t, srv).Buckets(), func(err error) { t.Error(err) }))
	}
	alice := mcp.Identity{Subject: "alice", Role: "viewer", TokenID: "t1"}
	bob := mcp.Identity{Subject: "bob", Role: "viewer", TokenID: "t2"}
	tool := mcp.Entry{Kind: mcp.KindTool, Name: "search"}
	var admitted, refusedWithHint atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 100 {
		wg.Go(func() {
			<-start
			ok, wait := replicas[i%3].Allow(alice, tool)
			if ok {
				admitted.Add(1)
			} else if wait > 90*time.Second { // one token at 0.01/s: 100 s away
				refusedWithHint.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	if admitted.Load() != 10 || refusedWithHint.Load() != 90 {
		t.Fatalf("100 concurrent calls over 3 replicas, burst 10: %d admitted, %d refused with an honest hint", admitted.Load(), refusedWithHint.Load())
	}
	// Another identity has its own bucket.
	if ok, _ := replicas[0].Allow(bob, tool); !ok {
		t.Error("bob refused by alice's spending")
	}
}

func TestSharedBucketRefillsOnTheServersClock(t *testing.T) {
	srv := peers.StartRedis(t)
	l := policy.NewLimiter(policy.LimitRules{Default: policy.Limit{Rate: 50, Burst: 1}}, nil).WithShared(open(t, srv).Buckets(), nil)
	id := mcp.Identity{Subject: "a", Role: "viewer"}
	e := mcp.Entry{Kind: mcp.KindTool, Name: "x"}
	if ok, _ := l.Allow(id, e); !ok {
		t.Fatal("first call refused")
	}
	ok, wait := l.Allow(id, e)
	if ok || wait <= 0 || wait > 20*time.Millisecond+time.Millisecond {
		t.Fatalf("second call: ok=%v wait=%v (one token every 20 ms)", ok, wait)
	}
	time.Sleep(wait) // the bucket refills with time, not with a signal
	if ok, wait := l.Allow(id, e); !ok {
		t.Errorf("after waiting the hint: refused again, wait %v", wait)
	}
}

// replica is one replica's token index over a store shared by all,
// listening to the token events.
func replica(t *testing.T, st auth.TokenSource, r *cluster.Redis, caughtUp chan<- struct{}) *auth.Tokens {
	t.Helper()
	tokens := auth.NewTokens(st, nil)
	if err := tokens.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	tokens.Announce(func(id string, at time.Time) {
		if err := r.Publish(context.Background(), cluster.TokenEvent{ID: id, RevokedAt: at}); err != nil {
			t.Error(err)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Watch(ctx, func(ev cluster.TokenEvent) { _ = tokens.Heard(ctx, ev.ID, ev.RevokedAt) }, func() {
			_ = tokens.Refresh(ctx)
			select {
			case caughtUp <- struct{}{}:
			default:
			}
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return tokens
}

func TestTokenEventsReachEveryReplicaAndMissesAreCaughtUp(t *testing.T) {
	srv := peers.StartRedis(t)
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ra, rb := open(t, srv), open(t, srv)
	upA, upB := make(chan struct{}, 8), make(chan struct{}, 8)
	a := replica(t, st, ra, upA)
	<-upA
	// A token revoked through a before b listens: b catches up when it
	// subscribes.
	ctx := context.Background()
	early, earlyRec, err := a.Create(ctx, "early", "viewer", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Revoke(ctx, earlyRec.ID); err != nil {
		t.Fatal(err)
	}
	b := replica(t, st, rb, upB)
	<-upB
	if _, err := b.Verify(early, time.Now()); !errors.Is(err, auth.ErrTokenRevoked) {
		t.Fatalf("a revocation b missed: %v", err)
	}
	// Created through a, known to b at once; revoked through a, refused
	// by b within a second, its stream told.
	secret, rec, err := a.Create(ctx, "ci", "viewer", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Second)
	for {
		if _, err := b.Verify(secret, time.Now()); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("b does not know a token created through a within a second")
		}
		time.Sleep(5 * time.Millisecond) // polling what the event changes
	}
	stream := b.Revoked(rec.ID)
	revokedAt := time.Now()
	if err := a.Revoke(ctx, rec.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stream:
		if d := time.Since(revokedAt); d > time.Second {
			t.Errorf("b heard of the revocation after %v", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("b's stream was not told of the revocation")
	}
	// b's subscription broken: it catches up again when it is back.
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer admin.Close()
	if err := admin.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-upB:
	case <-time.After(10 * time.Second):
		t.Fatal("b did not catch up after its subscription broke")
	}
}

// A person's grant revoked on one replica is heard on another, by their
// principal, as it was sent.
func TestAPersonsRevocationReachesEveryReplica(t *testing.T) {
	srv := peers.StartRedis(t)
	ra, rb := open(t, srv), open(t, srv)
	heard, up := make(chan cluster.TokenEvent, 1), make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		rb.Watch(ctx, func(ev cluster.TokenEvent) { heard <- ev }, func() { up <- struct{}{} })
	}()
	t.Cleanup(func() { cancel(); <-done })
	<-up
	const alice = "subject:https://idp.example\x01alice smith"
	if err := ra.Publish(ctx, cluster.TokenEvent{Principal: alice}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-heard:
		if ev != (cluster.TokenEvent{Principal: alice}) {
			t.Errorf("heard %+v", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the other replica did not hear the revocation")
	}
}

// sealedReplica is one replica's Streamable HTTP endpoint with sealed
// sessions shared in Redis; X-Test-Identity names the caller.
func sealedReplica(t *testing.T, r *cluster.Redis, limit int) string {
	t.Helper()
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "r", Version: "0"}})
	sealer, err := mcphttp.NewSealer([]byte(strings.Repeat("k", mcphttp.SessionKeySize)), nil)
	if err != nil {
		t.Fatal(err)
	}
	h := mcphttp.NewHandler(s, mcphttp.Options{Sealer: sealer, Shared: r.Sessions(), MaxSessionsPerIdentity: limit})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		req = req.WithContext(mcp.WithIdentity(req.Context(), mcp.Identity{Subject: req.Header.Get("X-Test-Identity")}))
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(h.Close)
	return srv.URL
}

func post(t *testing.T, url, who, sid, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Test-Identity", who)
	if sid != "" {
		req.Header.Set(mcphttp.HeaderSessionID, sid)
		req.Header.Set(mcphttp.HeaderProtocolVersion, mcp.Version20251125)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.StatusCode, resp.Header.Get(mcphttp.HeaderSessionID)
}

const initBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
const pingBody = `{"jsonrpc":"2.0","id":1,"method":"ping"}`

func TestSharedSessionsEndEverywhereAndAreCappedAcrossReplicas(t *testing.T) {
	srv := peers.StartRedis(t)
	a, b := sealedReplica(t, open(t, srv), 2), sealedReplica(t, open(t, srv), 2)
	_, s1 := post(t, a, "alice", "", initBody)
	_, s2 := post(t, b, "alice", "", initBody)
	if s1 == "" || s2 == "" {
		t.Fatal("initialize gave no session")
	}
	if status, _ := post(t, a, "alice", "", initBody); status != http.StatusTooManyRequests {
		t.Errorf("a third session of alice over two replicas, cap 2 = %d, want 429", status)
	}
	if _, other := post(t, a, "bob", "", initBody); other == "" {
		t.Error("bob is refused by alice's cap")
	}
	for _, url := range []string{a, b} {
		for _, sid := range []string{s1, s2} {
			if status, _ := post(t, url, "alice", sid, pingBody); status != http.StatusOK {
				t.Errorf("ping = %d", status)
			}
		}
	}
	// DELETE through b ends s1 on a as well, and frees its place.
	req, _ := http.NewRequest(http.MethodDelete, b, nil)
	req.Header.Set(mcphttp.HeaderSessionID, s1)
	req.Header.Set("X-Test-Identity", "alice")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if status, _ := post(t, b, "alice", s1, pingBody); status != http.StatusNotFound {
		t.Errorf("a deleted session answered %d where it was deleted, want 404", status)
	}
	// a, which holds it, hears within a second.
	deadline := time.Now().Add(3 * time.Second)
	for {
		status, _ := post(t, a, "alice", s1, pingBody)
		if status == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a deleted session still answers %d on the replica holding it", status)
		}
		time.Sleep(50 * time.Millisecond) // polling what Redis says
	}
	if _, s3 := post(t, a, "alice", "", initBody); s3 == "" {
		t.Error("the deleted session's place was not given back")
	}
}

// evalCalls is how many scripts the Redis server has run.
func evalCalls(t *testing.T, srv peers.RedisServer) int64 {
	t.Helper()
	calls, err := srv.CommandCalls(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return calls["evalsha"] + calls["eval"]
}

// A large bucket is leased in batches: a replica spends most of its calls'
// tokens in memory, not one Redis round trip each. The batches grow while
// they are spent before they expire: 16, 32, … 256.
func TestALargeBucketIsLeasedInBatches(t *testing.T) {
	srv := peers.StartRedis(t)
	l := policy.NewLimiter(policy.LimitRules{Default: policy.Limit{Rate: 1, Burst: 100000}}, nil).WithShared(open(t, srv).Buckets(), func(err error) { t.Error(err) })
	id, e := mcp.Identity{Subject: "a", Role: "viewer"}, mcp.Entry{Kind: mcp.KindTool, Name: "x"}
	before := evalCalls(t, srv)
	for range 1600 {
		if ok, _ := l.Allow(id, e); !ok {
			t.Fatal("refused from a bucket of 100,000")
		}
	}
	// Ten leases (16, 32, 64, 128, then six of 256), and the first one's
	// EVALSHA again as EVAL, which loads the script: 11. A lease that a
	// stalled machine lets expire halves the next, so the bound leaves
	// room; leases that never grew would take 100.
	if n := evalCalls(t, srv) - before; n > 40 {
		t.Fatalf("1,600 calls ran %d scripts on Redis, want about 11 (leases of 16, 32, 64, 128, then 256), and never the 100 of fixed leases", n)
	}
}

// The tail of a large bucket is still exact: a burst of N over three
// replicas admits exactly N, the leases out being spent by their replicas'
// next calls, and a replica that leaves gives back what it did not spend.
func TestALeasedBucketAdmitsExactlyItsBurstAndGetsBackWhatWasNotSpent(t *testing.T) {
	srv := peers.StartRedis(t)
	rules := policy.LimitRules{Default: policy.Limit{Rate: 0.001, Burst: 1000}}
	var replicas []*policy.Limiter
	var clients []*cluster.Redis
	for range 3 {
		r := open(t, srv)
		clients = append(clients, r)
		replicas = append(replicas, policy.NewLimiter(rules, nil).WithShared(r.Buckets(), func(err error) { t.Error(err) }))
	}
	id, e := mcp.Identity{Subject: "a", Role: "viewer"}, mcp.Entry{Kind: mcp.KindTool, Name: "x"}
	var admittedAll atomic.Int64
	var wg sync.WaitGroup
	for w := range 12 { // four callers on each replica at once
		wg.Go(func() {
			for range 1300 / 12 {
				if ok, _ := replicas[w%3].Allow(id, e); ok {
					admittedAll.Add(1)
				}
			}
		})
	}
	wg.Wait()
	// A replica whose callers ended first may still hold a lease for up
	// to leaseTTL; the others' calls spend it once it is back.
	if n := admittedAll.Load(); n > 1000 {
		t.Fatalf("1,296 concurrent calls over the 3 replicas, burst 1,000: %d admitted, more than the burst", n)
	}
	testkit.WaitFor(t, "every token of the burst admitted", func() bool {
		if ok, _ := replicas[1].Allow(id, e); ok {
			admittedAll.Add(1)
		}
		return admittedAll.Load() >= 1000
	})
	for _, r := range replicas {
		if ok, _ := r.Allow(id, e); ok {
			admittedAll.Add(1)
		}
	}
	if n := admittedAll.Load(); n != 1000 {
		t.Fatalf("burst 1,000: %d admitted in all, want exactly 1,000", n)
	}

	// Another identity: one call on a replica leases 16; closing that
	// replica gives 15 back, which the others may spend.
	bob := mcp.Identity{Subject: "b", Role: "viewer"}
	if ok, _ := replicas[0].Allow(bob, e); !ok {
		t.Fatal("bob's first call refused")
	}
	if err := clients[0].Close(); err != nil {
		t.Fatal(err)
	}
	admitted := 1
	for i := range 1300 {
		if ok, _ := replicas[1+i%2].Allow(bob, e); ok {
			admitted++
		}
	}
	if admitted != 1000 {
		t.Fatalf("bob: %d admitted in all, want 1,000: the closed replica's unspent lease was not given back", admitted)
	}
}

// A replica that no call reaches any more gives its unspent lease back
// within leaseTTL, with no call of its own: the other replicas then admit
// the whole burst, and not one more.
func TestALeaseOfAReplicaNoCallReachesComesBack(t *testing.T) {
	srv := peers.StartRedis(t)
	rules := policy.LimitRules{Default: policy.Limit{Rate: 0.001, Burst: 1000}}
	var replicas []*policy.Limiter
	for range 3 {
		replicas = append(replicas, policy.NewLimiter(rules, nil).WithShared(open(t, srv).Buckets(), func(err error) { t.Error(err) }))
	}
	id, e := mcp.Identity{Subject: "a", Role: "viewer"}, mcp.Entry{Kind: mcp.KindTool, Name: "x"}
	admitted := 0
	for range 40 { // leases of 16 and 32: 8 tokens left on this replica
		if ok, _ := replicas[0].Allow(id, e); ok {
			admitted++
		}
	}
	for i := range 1000 {
		if ok, _ := replicas[1+i%2].Allow(id, e); ok {
			admitted++
		}
	}
	if admitted > 1000 || admitted < 1000-maxLeaseLeft {
		t.Fatalf("%d admitted before the lease came back, want at most 1,000 and at most %d short", admitted, maxLeaseLeft)
	}
	testkit.WaitFor(t, "the idle replica's lease back and spent", func() bool {
		if ok, _ := replicas[1].Allow(id, e); ok {
			admitted++
		}
		return admitted >= 1000
	})
	if ok, _ := replicas[2].Allow(id, e); ok || admitted != 1000 {
		t.Fatalf("%d admitted, then one more %v: want exactly the burst", admitted, ok)
	}
}

// maxLeaseLeft bounds what one replica's leases of 16 and 32 leave unspent
// after 40 calls.
const maxLeaseLeft = 48

// A task's route kept through one replica is read through another, for
// its caller alone; no other backend takes it while it lives, and it ends
// with the task's ttl, on Redis's clock.
func TestATasksRouteIsEveryReplicasAndNoOtherBackendsToTake(t *testing.T) {
	srv := peers.StartRedis(t)
	a, b := open(t, srv).Tasks(), open(t, srv).Tasks()
	ctx := context.Background()
	route := func(s interface {
		Route(context.Context, string, string, string, time.Duration) (string, error)
	}, who, id, backend string, ttl time.Duration, want string) {
		t.Helper()
		if got, err := s.Route(ctx, who, id, backend, ttl); err != nil || got != want {
			t.Errorf("%s's task %s routed to %s: held by %q %v, want %q", who, id, backend, got, err, want)
		}
	}
	route(a, "alice", "t1", "b1", time.Minute, "b1")
	if got, left, err := b.Routed(ctx, "alice", "t1"); err != nil || got != "b1" || left <= 0 || left > time.Minute {
		t.Errorf("alice's t1 through the other replica: %q for %v %v, want b1 for up to a minute", got, left, err)
	}
	route(b, "alice", "t1", "b2", time.Minute, "b1")
	route(b, "alice", "t1", "b1", time.Minute, "b1")
	if got, _, err := b.Routed(ctx, "mallory", "t1"); err != nil || got != "" {
		t.Errorf("mallory's t1: %q %v, want no route", got, err)
	}
	route(b, "mallory", "t1", "b2", time.Minute, "b2")

	route(a, "alice", "t2", "b1", time.Millisecond, "b1")
	deadline := time.Now().Add(3 * time.Second)
	for {
		got, _, err := b.Routed(ctx, "alice", "t2")
		if err != nil {
			t.Fatal(err)
		}
		if got == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a route of 1ms still lives after 3s")
		}
		time.Sleep(5 * time.Millisecond) // polling what Redis's clock says
	}
	route(b, "alice", "t2", "b2", time.Minute, "b2")
}

// A retry handed to the replica holding its call reaches it byte for byte,
// and its answer, a result or an error object, comes back as that replica
// gave it. A replica that does not listen, or a name that is no replica's,
// is a park unknown.
func TestARetryIsHandedToItsReplicaAndItsAnswerBack(t *testing.T) {
	srv := peers.StartRedis(t)
	here, there := open(t, srv).HandOff(), open(t, srv).HandOff()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	var mu sync.Mutex
	var got catalogue.ParkedRetry
	answers := make(chan string, 1)
	go func() {
		defer close(served)
		there.Serve(ctx, func(_ context.Context, r catalogue.ParkedRetry) (json.RawMessage, error) {
			mu.Lock()
			got = r
			mu.Unlock()
			if r.Park == "fail" {
				return nil, jsonrpc.RawError(json.RawMessage(`{"code":-32602, "message":"no <such> park"}`))
			}
			return json.RawMessage(`{"resultType":"complete", "content":[{"type":"text","text":"<&>"}]}`), nil
		}, func(session string, m []byte) { answers <- session + " " + string(m) })
	}()
	t.Cleanup(func() { cancel(); <-served })
	deadline := time.Now().Add(5 * time.Second)
	for there.Replica() == "" {
		if time.Now().After(deadline) {
			t.Fatal("the replica does not listen after 5s")
		}
		time.Sleep(5 * time.Millisecond) // polling the subscription's confirmation
	}
	if here.Replica() != "" {
		t.Errorf("a replica that does not listen names itself %q in its parks", here.Replica())
	}

	// What does not parse, or names a reply list outside the hand-off's,
	// is dropped, and the replica goes on listening.
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer raw.Close()
	for _, bad := range []string{`not json`, `{"reply":"t:elsewhere","retry":{}}`, `{"answer":7}`} {
		if err := raw.Publish(context.Background(), "t:"+t.Name()+":handoff:"+there.Name(), bad).Err(); err != nil {
			t.Fatal(err)
		}
	}

	retry := catalogue.ParkedRetry{Backend: "b1", Park: there.Replica() + ".p1", Principal: "alice\x00tok_1", Method: "tools/call", Entry: "b1__ask",
		Params:       json.RawMessage(`{"name":"b1__ask", "inputResponses":{"k":{"action":"accept","content":{"x":"<&>\u2028"}}}}`),
		Capabilities: json.RawMessage(`{"elicitation":{}}`)}
	res, err := here.Resume(context.Background(), there.Replica(), retry)
	if err != nil || string(res) != `{"resultType":"complete", "content":[{"type":"text","text":"<&>"}]}` {
		t.Errorf("the answer: %s %v, want the result byte for byte", res, err)
	}
	mu.Lock()
	arrived := got
	mu.Unlock()
	if got := arrived; got.Principal != retry.Principal || string(got.Params) != string(retry.Params) || string(got.Capabilities) != string(retry.Capabilities) ||
		got.Backend != "b1" || got.Park != retry.Park || got.Method != "tools/call" || got.Entry != "b1__ask" {
		t.Errorf("the retry arrived as %+v, want %+v", got, retry)
	}

	retry.Park = "fail"
	_, err = here.Resume(context.Background(), there.Replica(), retry)
	var je *jsonrpc.Error
	if !errors.As(err, &je) || string(je.Raw()) != `{"code":-32602, "message":"no <such> park"}` {
		t.Errorf("the error: %v, want the holder's error object byte for byte", err)
	}

	for _, name := range []string{"0123456789abcdef", "not a replica", there.Replica() + "x"} {
		if _, err := here.Resume(context.Background(), name, retry); !errors.Is(err, catalogue.ErrParkUnknown) {
			t.Errorf("a retry for replica %q: %v, want the park unknown", name, err)
		}
	}

	// A client's answer to a request of the other replica's goes there as
	// it came.
	here.Answer(context.Background(), there.Name(), "sealed-1", []byte(`{"jsonrpc":"2.0", "id":"mcpgate-x-1","result":{"t":"<&>"}}`))
	select {
	case got := <-answers:
		if got != `sealed-1 {"jsonrpc":"2.0", "id":"mcpgate-x-1","result":{"t":"<&>"}}` {
			t.Errorf("the answer arrived as %s", got)
		}
	case <-time.After(5 * time.Second):
		t.Error("the answer did not arrive in 5s")
	}
	if n, err := raw.Exists(context.Background(), "t:elsewhere").Result(); err != nil || n != 0 {
		t.Errorf("a reply list outside the hand-off's was written (%d, %v)", n, err)
	}
}

// A retry whose replica ends before it answers is told so within seconds,
// not left waiting for an answer that will not come.
func TestARetryWhoseReplicaEndsMidCallIsToldSo(t *testing.T) {
	srv := peers.StartRedis(t)
	here, there := open(t, srv).HandOff(), open(t, srv).HandOff()
	ctx, cancel := context.WithCancel(context.Background())
	resumed, release := make(chan struct{}), make(chan struct{})
	served := make(chan struct{})
	go func() {
		defer close(served)
		there.Serve(ctx, func(context.Context, catalogue.ParkedRetry) (json.RawMessage, error) {
			close(resumed)
			<-release // the call is still under way when the replica stops listening
			return nil, errors.New("ended")
		}, func(string, []byte) {})
	}()
	defer func() { cancel(); close(release); <-served }()
	deadline := time.Now().Add(5 * time.Second)
	for there.Replica() == "" {
		if time.Now().After(deadline) {
			t.Fatal("the replica does not listen after 5s")
		}
		time.Sleep(5 * time.Millisecond) // polling the subscription's confirmation
	}
	go func() { <-resumed; cancel() }() // the replica ends mid-call
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer wcancel()
	_, err := here.Resume(wctx, there.Replica(), catalogue.ParkedRetry{Backend: "b1", Park: there.Replica() + ".p1", Params: json.RawMessage(`{}`)})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInternalError || !strings.Contains(je.Message, "gone") {
		t.Errorf("a retry whose replica ended: %v, want -32603 saying it has gone", err)
	}
}
