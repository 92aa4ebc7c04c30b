// auditquery.go is how the audit log is searched and paged (the admin
// console's audit page): the filters, the cursor of a page, and the WHERE
// clause both stores build from them, each in its own SQL dialect.

package store

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// AuditQuery selects audit records, newest first. Every field set must
// match.
type AuditQuery struct {
	Identity string    // the caller's subject or token id, exactly
	Entry    string    // part of the entry's name (tool, prompt, resource URI)
	Outcome  string    // exactly (ok, tool_error, forbidden, …)
	Rule     string    // the rule or interceptor that denied it, exactly
	Since    time.Time // at or after
	Until    time.Time // before
	// After is a page's Next: only records older than that page's last.
	After string
	// NewerThan is a page's Head: only records written after that
	// page's latest written (a live tail).
	NewerThan string
	Limit     int // at most this many (0: DefaultAuditPage)
}

// DefaultAuditPage is a page's size when the query sets none; a page
// never holds more than MaxAuditPage.
const (
	DefaultAuditPage = 50
	MaxAuditPage     = 1000
)

// AuditPage is one page of a query's records, newest first; Next, when
// not empty, is the After of the next (older) page.
type AuditPage struct {
	Records []AuditRecord
	Next    string
	// Head is the NewerThan of a query for what is written after this
	// page (the query's own NewerThan when the page is empty).
	Head string
}

// ErrBadCursor is returned for an After no page gave.
var ErrBadCursor = errors.New("store: not a page cursor")

// PageLimit is q's page size.
func (q AuditQuery) PageLimit() int {
	switch {
	case q.Limit <= 0:
		return DefaultAuditPage
	case q.Limit > MaxAuditPage:
		return MaxAuditPage
	}
	return q.Limit
}

// Dialect writes what differs between the stores' SQL: the i-th
// placeholder (from 1), and the test that column contains the text of a
// placeholder.
type Dialect struct {
	Arg      func(i int) string
	Contains func(column, arg string) string
	// Unseen, when set, is the condition for the records that a page
	// whose Head is head had not seen, for a store whose heads are its
	// own (PostgreSQL's name a snapshot); arg adds a value and names its
	// placeholder. False for a head it did not make. Otherwise a live
	// tail asks for the records of a greater id.
	Unseen func(head string, arg func(v any) string) (cond string, ok bool)
}

// AuditWhere is q's WHERE clause (empty when q selects everything) and
// its arguments. Records are ordered by (time, id); the cursor is the
// last record's pair. Text is matched as records keep it (Storable).
func AuditWhere(q AuditQuery, d Dialect) (string, []any, error) {
	var conds []string
	var args []any
	arg := func(v any) string {
		if s, ok := v.(string); ok {
			v = Storable(s)
		}
		args = append(args, v)
		return d.Arg(len(args))
	}
	if q.Identity != "" {
		a := arg(q.Identity)
		conds = append(conds, "(subject = "+a+" OR token_id = "+a+")")
	}
	if q.Entry != "" {
		conds = append(conds, d.Contains("name", arg(q.Entry)))
	}
	if q.Outcome != "" {
		conds = append(conds, "outcome = "+arg(q.Outcome))
	}
	if q.Rule != "" {
		conds = append(conds, "rule = "+arg(q.Rule))
	}
	if !q.Since.IsZero() {
		conds = append(conds, "time >= "+arg(EncodeTime(q.Since)))
	}
	if !q.Until.IsZero() {
		conds = append(conds, "time < "+arg(EncodeTime(q.Until)))
	}
	if q.After != "" {
		t, id, err := parseCursor(q.After)
		if err != nil {
			return "", nil, err
		}
		ta := arg(t)
		conds = append(conds, "(time < "+ta+" OR (time = "+ta+" AND id < "+arg(id)+"))")
	}
	if q.NewerThan != "" {
		cond, ok := "", false
		if d.Unseen != nil {
			cond, ok = d.Unseen(q.NewerThan, arg)
		}
		if !ok {
			_, id, err := parseCursor(q.NewerThan)
			if err != nil {
				return "", nil, err
			}
			cond = "id > " + arg(id)
		}
		conds = append(conds, cond)
	}
	if len(conds) == 0 {
		return "", nil, nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args, nil
}

// AuditPageOrder ends a query of AuditColumns after "id, ": newest first,
// one row more than the page so that its end is known.
func AuditPageOrder(q AuditQuery, d Dialect, args []any) (string, []any) {
	args = append(args, q.PageLimit()+1)
	return " ORDER BY time DESC, id DESC LIMIT " + d.Arg(len(args)), args
}

// ScanAuditPage reads the rows of "id, "+AuditColumns that AuditPageOrder
// ordered into q's page.
func ScanAuditPage(rows Rows, q AuditQuery) (AuditPage, error) {
	limit := q.PageLimit()
	page := AuditPage{Head: q.NewerThan}
	var lastID, headID int64
	for rows.Next() {
		if len(page.Records) == limit {
			page.Next = cursor(page.Records[len(page.Records)-1].Time, lastID)
			break
		}
		r, err := scanAuditRecord(rows, &lastID)
		if err != nil {
			return AuditPage{}, err
		}
		page.Records = append(page.Records, r)
		if lastID > headID {
			headID = lastID
			page.Head = cursor(r.Time, lastID)
		}
	}
	return page, rows.Err()
}

// cursor names the record written as id at t, as parseCursor reads it.
func cursor(t time.Time, id int64) string { return fmt.Sprintf("%d.%d", EncodeTime(t), id) }

func parseCursor(s string) (t, id int64, err error) {
	a, b, ok := strings.Cut(s, ".")
	if ok {
		if t, err = strconv.ParseInt(a, 10, 64); err == nil {
			if id, err = strconv.ParseInt(b, 10, 64); err == nil {
				return t, id, nil
			}
		}
	}
	return 0, 0, ErrBadCursor
}
