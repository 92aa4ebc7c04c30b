package gateway_test

import (
	"encoding/json"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/testkit"
)

// The console's live tail answers at most a page of the records written
// since its head, the newest; when more were written, it says that some
// were left out, so the page can mark the gap instead of hiding it.
func TestTheLiveTailSaysWhenItLeftRecordsOut(t *testing.T) {
	e := gwStart(t, "")
	admin, _ := e.token("ops", "admin")
	bearer := map[string]string{"Authorization": "Bearer " + admin}
	ctx := testkit.Context(t)
	write := func(n int) {
		t.Helper()
		recs := make([]store.AuditRecord, n)
		for i := range recs {
			recs[i] = store.AuditRecord{Time: time.Now(), Subject: "s", Kind: "tool", Name: "t" + strconv.Itoa(i), Outcome: "ok"}
		}
		if err := e.store.AppendAudit(ctx, recs); err != nil {
			t.Fatal(err)
		}
	}
	type tail struct {
		Head    string `json:"head"`
		N       int    `json:"n"`
		Skipped bool   `json:"skipped"`
	}
	poll := func(head string) tail {
		t.Helper()
		resp, body := adminDo(t, e, "GET", "/admin/audit/tail?head="+url.QueryEscape(head), nil, bearer)
		var got tail
		if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &got) != nil {
			t.Fatalf("the tail: %d %s", resp.StatusCode, body)
		}
		return got
	}
	write(1)
	first, err := e.store.QueryAudit(ctx, store.AuditQuery{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	head := first.Head
	for _, c := range []struct {
		name    string
		written int
		n       int
		skipped bool
	}{
		{"a few: all of them", 5, 5, false},
		{"exactly a page: all of them", store.MaxAuditPage, store.MaxAuditPage, false},
		{"more than a page: the newest page, and the gap said", store.MaxAuditPage + 7, store.MaxAuditPage, true},
		{"nothing new", 0, 0, false},
	} {
		write(c.written)
		got := poll(head)
		if got.N != c.n || got.Skipped != c.skipped {
			t.Errorf("%s: n=%d skipped=%v, want n=%d skipped=%v", c.name, got.N, got.Skipped, c.n, c.skipped)
		}
		head = got.Head
	}
}
