// Package storetest is the contract of store.Store, as tests every store
// runs: SQLite's and PostgreSQL's packages call Run with a function that
// opens a fresh, empty store of theirs. Tokens come back exactly, ids and
// hashes are unique, revocation is of a known token and happens once;
// audit records come back exactly (durations to the microsecond),
// concurrent batches all land, and TailAudit returns the latest n, oldest
// first.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/store"
)

// Run runs every contract test on stores that open returns, a fresh one
// for each test.
func Run(t *testing.T, open func(*testing.T) store.Store) {
	for _, c := range []struct {
		name string
		test func(*testing.T, func(*testing.T) store.Store)
	}{
		{"TokenRoundTripsEveryField", testTokenRoundTripsEveryField},
		{"TokenTimesComeBackInUTC", testTokenTimesComeBackInUTC},
		{"TokensOldestFirst", testTokensOldestFirst},
		{"TokenIDAndHashAreUnique", testTokenIDAndHashAreUnique},
		{"RevokeUnknownTokenIsNotFound", testRevokeUnknownTokenIsNotFound},
		{"RevokeTwiceKeepsTheFirstTime", testRevokeTwiceKeepsTheFirstTime},
		{"AuditRoundTripsEveryField", testAuditRoundTripsEveryField},
		{"AuditZeroTimeAndSubMicrosecondDuration", testAuditZeroTimeAndSubMicrosecondDuration},
		{"AuditTextWithNULOrInvalidUTF8IsKeptWithReplacements", testAuditTextWithNULOrInvalidUTF8IsKeptWithReplacements},
		{"AppendAuditEmptyBatch", testAppendAuditEmptyBatch},
		{"ConcurrentAppendAuditAllPersisted", testConcurrentAppendAuditAllPersisted},
		{"TailAuditLatestOldestFirst", testTailAuditLatestOldestFirst},
		{"AppendAuditBatchAcrossInsertsKeepsOrder", testAppendAuditBatchAcrossInsertsKeepsOrder},
		{"QueryAuditFiltersAndPagesNewestFirst", testQueryAuditFiltersAndPagesNewestFirst},
		{"PinsFirstSightChangeApproveReject", testPinsFirstSightChangeApproveReject},
		{"PinsFirstSightByReplicasAtOnce", testPinsFirstSightByReplicasAtOnce},
		{"PinsKeepADefinitionWithBytesNotUTF8", testPinsKeepADefinitionWithBytesNotUTF8},
		{"PersonalCredentialsAreKeyedByPrincipalAndBackend", testPersonalCredentialsAreKeyedByPrincipalAndBackend},
		{"PersonalCredentialUpdatesTakeTurns", testPersonalCredentialUpdatesTakeTurns},
		{"PingAnswersUntilClosed", testPingAnswersUntilClosed},
	} {
		t.Run(c.name, func(t *testing.T) { c.test(t, open) })
	}
	for _, c := range oauthTests {
		t.Run(c.name, func(t *testing.T) { c.test(t, open) })
	}
}

// Ping is what the metrics' reachability gauge asks: nil while the store
// serves, an error once it cannot.
func testPingAnswersUntilClosed(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping of an open store: %v", err)
	}
	_ = s.Close()
	if err := s.Ping(t.Context()); err == nil {
		t.Fatal("Ping of a closed store answered nil")
	}
}

// Token is a token of the tests: id, hash, and fixed other fields.
func Token(id string, hash []byte) store.Token {
	return store.Token{ID: id, Name: "ci " + id, Role: "editor", Hash: hash,
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)}
}

func testTokenRoundTripsEveryField(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	want := []store.Token{
		{ID: "tok_full", Name: "deploy bot", Role: "admin", Hash: []byte{0, 1, 2, 0xff},
			CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC),
			ExpiresAt: time.Date(2027, 1, 2, 3, 4, 5, 987654321, time.UTC),
			RevokedAt: time.Date(2026, 6, 1, 0, 0, 0, 1, time.UTC)},
		{ID: "tok_zero_times", Name: "", Role: "viewer", Hash: []byte("h2"),
			CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 123456790, time.UTC)},
	}
	for _, tok := range want {
		if err := s.CreateToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Tokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", got, want)
	}
}

func testTokenTimesComeBackInUTC(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	zone := time.FixedZone("UTC+5", 5*3600)
	tok := Token("tok_zone", []byte("h"))
	tok.CreatedAt = time.Date(2026, 3, 1, 12, 0, 0, 42, zone)
	if err := s.CreateToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	got, err := s.Tokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c := got[0].CreatedAt; !c.Equal(tok.CreatedAt) || c.Location() != time.UTC {
		t.Fatalf("created %v, want %v in UTC", c, tok.CreatedAt)
	}
}

func testTokensOldestFirst(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, id := range []string{"tok_c", "tok_a", "tok_b"} {
		tok := Token(id, []byte(id))
		tok.CreatedAt = base.Add(time.Duration(2-i) * time.Hour) // c newest, b oldest
		if err := s.CreateToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Tokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tok := range got {
		ids = append(ids, tok.ID)
	}
	if !reflect.DeepEqual(ids, []string{"tok_b", "tok_a", "tok_c"}) {
		t.Fatalf("order %v", ids)
	}
}

func testTokenIDAndHashAreUnique(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	if err := s.CreateToken(ctx, Token("tok_1", []byte("hash-1"))); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		tok  store.Token
	}{
		{"same id", Token("tok_1", []byte("hash-2"))},
		{"same hash", Token("tok_2", []byte("hash-1"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.CreateToken(ctx, tt.tok)
			if !errors.Is(err, store.ErrDuplicate) {
				t.Fatalf("error %v, want store.ErrDuplicate", err)
			}
		})
	}
	got, err := s.Tokens(ctx)
	if err != nil || len(got) != 1 || got[0].Name != "ci tok_1" {
		t.Fatalf("tokens %+v, %v: a refused token changed the table", got, err)
	}
}

func testRevokeUnknownTokenIsNotFound(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	// An id no store holds (a NUL, a stray byte) is not found either,
	// never a database error.
	for _, id := range []string{"tok_nope", "tok_\x00", "tok_\xff"} {
		if err := s.RevokeToken(context.Background(), id, time.Now()); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("revoking %q: %v, want store.ErrNotFound", id, err)
		}
	}
}

func testRevokeTwiceKeepsTheFirstTime(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	if err := s.CreateToken(ctx, Token("tok_r", []byte("r"))); err != nil {
		t.Fatal(err)
	}
	first := time.Date(2026, 2, 1, 0, 0, 0, 7, time.UTC)
	for _, at := range []time.Time{first, first.Add(time.Hour)} {
		if err := s.RevokeToken(ctx, "tok_r", at); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Tokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !got[0].RevokedAt.Equal(first) {
		t.Fatalf("revoked at %v, want the first revocation %v", got[0].RevokedAt, first)
	}
	if got[0].Active(first) {
		t.Fatal("a revoked token is active")
	}
}

func testAuditRoundTripsEveryField(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	want := []store.AuditRecord{
		{Time: time.Date(2026, 4, 1, 10, 0, 0, 123456789, time.UTC), Subject: "alice", TokenID: "tok_1", Role: "editor",
			Kind: "tool", Name: "deploy", Backend: "github", Outcome: "forbidden", Code: -32001,
			Duration: 1500 * time.Microsecond, Origin: "create_deployment", Upstream: "vault:deploy", Rule: "oncall-deploy", Redacted: "aws_access_key_id=1 private_key=2", Hooks: "dlp:error_open fix:mutate"},
		{Time: time.Date(2026, 4, 1, 10, 0, 0, 123456790, time.UTC), Subject: "bob", Role: "viewer",
			Kind: "resource", Name: "x://rows/7", Outcome: "ok"},
		{Time: time.Date(2026, 4, 1, 10, 0, 1, 0, time.UTC), Subject: "ünïcode ✓", Kind: "prompt", Name: "review",
			Outcome: "error", Code: -32603, Duration: 90 * time.Minute},
	}
	if err := s.AppendAudit(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := s.TailAudit(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", got, want)
	}
}

// A record's text comes from callers and backends: a tool's name asked
// for, a subject, an interceptor's reason. Whatever bytes it holds, the
// record is written, its neighbours with it, in a small group and in a
// large batch alike; each NUL and each invalid byte reads back as U+FFFD.
func testAuditTextWithNULOrInvalidUTF8IsKeptWithReplacements(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	hostile := func(field string) store.AuditRecord {
		bad := field + "\x00\xff\xfe|\xed\xa0\x80|\xc0\xaf"
		return store.AuditRecord{Time: time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC), Subject: bad, TokenID: bad, Role: bad,
			Kind: bad, Name: bad, Backend: bad, Outcome: bad, Origin: bad, Upstream: bad, Rule: bad, Redacted: bad, Hooks: bad}
	}
	kept := func(field string) store.AuditRecord {
		r := hostile(field)
		good := field + "\uFFFD\uFFFD|\uFFFD|\uFFFD"
		r.Subject, r.TokenID, r.Role, r.Kind, r.Name, r.Backend, r.Outcome = good, good, good, good, good, good, good
		r.Origin, r.Upstream, r.Rule, r.Redacted, r.Hooks = good, good, good, good, good
		return r
	}
	plain := store.AuditRecord{Time: time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC), Subject: "alice", Kind: "tool", Name: "ok", Outcome: "ok"}
	for _, n := range []int{3, 40} { // a group commit's few, and a batch past the copy threshold
		var in, want []store.AuditRecord
		for i := range n {
			if i%3 == 1 {
				in, want = append(in, hostile(fmt.Sprint(i))), append(want, kept(fmt.Sprint(i)))
			} else {
				in, want = append(in, plain), append(want, plain)
			}
		}
		if err := s.AppendAudit(ctx, in); err != nil {
			t.Fatalf("a batch of %d with hostile text: %v", n, err)
		}
		got, err := s.TailAudit(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("a batch of %d read back as\n%+v\nwant\n%+v", n, got, want)
		}
	}
	// A filter with the same bytes finds the records as kept, and is no
	// error: the console's audit page filters by what a caller sent.
	bad := hostile("1").Subject
	for _, q := range []store.AuditQuery{{Identity: bad}, {Identity: bad, Entry: bad, Outcome: bad, Rule: bad}} {
		page, err := s.QueryAudit(ctx, q)
		if err != nil || len(page.Records) != 2 {
			t.Errorf("a query by the hostile text %+v: %d records, %v; want the 2 kept", q, len(page.Records), err)
		}
	}
}

func testAuditZeroTimeAndSubMicrosecondDuration(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	in := store.AuditRecord{Kind: "tool", Name: "t", Duration: 1999 * time.Nanosecond}
	if err := s.AppendAudit(ctx, []store.AuditRecord{in}); err != nil {
		t.Fatal(err)
	}
	got, err := s.TailAudit(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !got[0].Time.IsZero() {
		t.Errorf("zero time came back as %v", got[0].Time)
	}
	if got[0].Duration != time.Microsecond {
		t.Errorf("duration %v, want it truncated to 1µs", got[0].Duration)
	}
}

func testAppendAuditEmptyBatch(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	if err := s.AppendAudit(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

func testConcurrentAppendAuditAllPersisted(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	const writers, batches, size = 32, 10, 8
	var wg sync.WaitGroup
	errs := make(chan error, writers*batches)
	for w := range writers {
		wg.Go(func() {
			for b := range batches {
				recs := make([]store.AuditRecord, size)
				for i := range recs {
					recs[i] = store.AuditRecord{Time: time.Now().UTC(), Kind: "tool", Name: fmt.Sprintf("%d/%d/%d", w, b, i)}
				}
				errs <- s.AppendAudit(ctx, recs)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.TailAudit(ctx, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range got {
		seen[r.Name]++
	}
	if len(got) != writers*batches*size || len(seen) != len(got) {
		t.Fatalf("%d records, %d distinct, want %d of each", len(got), len(seen), writers*batches*size)
	}
}

func testTailAuditLatestOldestFirst(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	at := func(sec int) time.Time { return time.Date(2026, 1, 1, 0, 0, sec, 0, time.UTC) }
	// Written out of time order, as concurrent calls that finish in
	// another order than they arrived are; two share a time.
	for _, r := range []struct {
		name string
		sec  int
	}{{"c", 3}, {"a", 1}, {"d", 4}, {"b1", 2}, {"b2", 2}} {
		if err := s.AppendAudit(ctx, []store.AuditRecord{{Time: at(r.sec), Name: r.name}}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		n    int
		want []string
	}{
		{-1, nil},
		{0, nil},
		{1, []string{"d"}},
		{3, []string{"b2", "c", "d"}},
		{4, []string{"b1", "b2", "c", "d"}},
		{100, []string{"a", "b1", "b2", "c", "d"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.n), func(t *testing.T) {
			got, err := s.TailAudit(ctx, tt.n)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, r := range got {
				names = append(names, r.Name)
			}
			if !reflect.DeepEqual(names, tt.want) {
				t.Fatalf("TailAudit(%d) = %v, want %v", tt.n, names, tt.want)
			}
		})
	}
}

// A batch larger than one INSERT's rows is written whole and in order,
// across full statements and the remainder.
func testAppendAuditBatchAcrossInsertsKeepsOrder(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	at := time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC)
	want := make([]store.AuditRecord, 2*64+3) // two full INSERTs of 64 rows and a remainder
	for i := range want {
		// One instant for all: their order is the order written.
		want[i] = store.AuditRecord{Time: at, Subject: "s", Kind: "tool", Name: fmt.Sprint("t", i), Outcome: "ok", Code: int64(i)}
	}
	if err := s.AppendAudit(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := s.TailAudit(ctx, len(want)+10)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %d records, want %d in order; first differing: %v", len(got), len(want), firstDiff(got, want))
	}
}

func firstDiff(got, want []store.AuditRecord) string {
	for i := range min(len(got), len(want)) {
		if !reflect.DeepEqual(got[i], want[i]) {
			return fmt.Sprintf("#%d got %+v want %+v", i, got[i], want[i])
		}
	}
	return "lengths"
}

// QueryAudit matches every filter set: identity by subject or token id,
// part of the name, the outcome, the rule that denied, a time range. It pages newest first by
// (time, written order), without losing or repeating a record, even where
// records share a time across a page's end.
func testQueryAuditFiltersAndPagesNewestFirst(t *testing.T, open func(*testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	at := func(sec int) time.Time { return time.Date(2026, 1, 1, 0, 0, sec, 0, time.UTC) }
	records := []store.AuditRecord{
		{Time: at(3), Subject: "ann", TokenID: "tok_a", Name: "fs__read_file", Outcome: "ok"},
		{Time: at(1), Subject: "bob", TokenID: "tok_b", Name: "fs__write_file", Outcome: "forbidden", Rule: "no-writes"},
		{Time: at(2), Subject: "ann", TokenID: "tok_a", Name: "greet", Outcome: "ok"},
		{Time: at(2), Subject: "ann", TokenID: "tok_a2", Name: "fs__read_file", Outcome: "tool_error"},
		{Time: at(2), Subject: "bob", TokenID: "tok_b", Name: "mem://100%_x", Outcome: "ok"},
		{Time: at(5), Subject: "cy", Name: "fs__read_file", Outcome: "rate_limited"},
	}
	if err := s.AppendAudit(ctx, records); err != nil {
		t.Fatal(err)
	}
	key := func(r store.AuditRecord) string { return fmt.Sprintf("%s@%d/%s", r.Name, r.Time.Second(), r.TokenID) }
	all := func(q store.AuditQuery) []string {
		t.Helper()
		var out []string
		for pages := 0; ; pages++ {
			page, err := s.QueryAudit(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if q.Limit > 0 && len(page.Records) > q.Limit {
				t.Fatalf("a page of %d holds %d", q.Limit, len(page.Records))
			}
			for _, r := range page.Records {
				out = append(out, key(r))
			}
			if page.Next == "" || pages > 20 {
				return out
			}
			q.After = page.Next
		}
	}
	newestFirst := []string{"fs__read_file@5/", "fs__read_file@3/tok_a", "mem://100%_x@2/tok_b", "fs__read_file@2/tok_a2",
		"greet@2/tok_a", "fs__write_file@1/tok_b"}
	for _, tt := range []struct {
		name string
		q    store.AuditQuery
		want []string
	}{
		{"everything", store.AuditQuery{}, newestFirst},
		{"pages of one", store.AuditQuery{Limit: 1}, newestFirst},
		{"pages of two", store.AuditQuery{Limit: 2}, newestFirst},
		{"subject", store.AuditQuery{Identity: "bob"}, []string{"mem://100%_x@2/tok_b", "fs__write_file@1/tok_b"}},
		{"token id", store.AuditQuery{Identity: "tok_a2"}, []string{"fs__read_file@2/tok_a2"}},
		{"the rule that denied", store.AuditQuery{Rule: "no-writes"}, []string{"fs__write_file@1/tok_b"}},
		{"part of the name", store.AuditQuery{Entry: "read", Limit: 2}, []string{"fs__read_file@5/", "fs__read_file@3/tok_a", "fs__read_file@2/tok_a2"}},
		{"a name with wildcard characters", store.AuditQuery{Entry: "%_"}, []string{"mem://100%_x@2/tok_b"}},
		{"outcome", store.AuditQuery{Outcome: "ok"}, []string{"fs__read_file@3/tok_a", "mem://100%_x@2/tok_b", "greet@2/tok_a"}},
		{"time range", store.AuditQuery{Since: at(2), Until: at(3)}, []string{"mem://100%_x@2/tok_b", "fs__read_file@2/tok_a2", "greet@2/tok_a"}},
		{"all at once", store.AuditQuery{Identity: "ann", Entry: "fs__", Outcome: "ok", Since: at(1)}, []string{"fs__read_file@3/tok_a"}},
		{"nothing", store.AuditQuery{Identity: "nobody"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := all(tt.q); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
	// A live tail: what is written after a page's head, whatever its time
	// (a slow call's record is written late with an early time).
	head, err := s.QueryAudit(ctx, store.AuditQuery{Limit: 2})
	if err != nil || head.Head == "" {
		t.Fatalf("head page: %+v %v", head, err)
	}
	if err := s.AppendAudit(ctx, []store.AuditRecord{{Time: at(0), Subject: "late", Name: "slow"}, {Time: at(9), Subject: "new", Name: "fresh"}}); err != nil {
		t.Fatal(err)
	}
	tail, err := s.QueryAudit(ctx, store.AuditQuery{NewerThan: head.Head})
	if err != nil {
		t.Fatal(err)
	}
	var tailNames []string
	for _, r := range tail.Records {
		tailNames = append(tailNames, r.Name)
	}
	if !reflect.DeepEqual(tailNames, []string{"fresh", "slow"}) {
		t.Errorf("the tail after the head = %v, want [fresh slow]", tailNames)
	}
	if again, err := s.QueryAudit(ctx, store.AuditQuery{NewerThan: tail.Head}); err != nil || len(again.Records) != 0 || again.Head != tail.Head {
		t.Errorf("the tail after the tail's head = %+v, %v; want nothing, the same head", again, err)
	}
	if _, err := s.QueryAudit(ctx, store.AuditQuery{After: "not-a-cursor"}); !errors.Is(err, store.ErrBadCursor) {
		t.Errorf("a cursor no page gave: %v, want ErrBadCursor", err)
	}
}

// BenchmarkAppendAudit writes batches of n records to the store open
// gives; ns/op is per batch. Every store's benchmark is this one: 1 and 4
// records are a group commit's batches under load, 256 the async mode's.
func BenchmarkAppendAudit(b *testing.B, open func(testing.TB) store.Store, n int) {
	ctx, cancel := context.WithCancel(context.Background()) // as the audit writer's, cancellable
	defer cancel()
	s := open(b)
	batch := make([]store.AuditRecord, n)
	for i := range batch {
		batch[i] = store.AuditRecord{Time: time.Now(), Subject: "bench", TokenID: "tok_1", Role: "admin",
			Kind: "tool", Name: "test_simple_text", Backend: "fixture", Outcome: "ok", Duration: 80 * time.Microsecond}
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.AppendAudit(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
}
