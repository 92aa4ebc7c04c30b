// columns.go is how a time.Time and a time.Duration are kept in a store's
// columns, the same in every store. A time is UTC unix nanoseconds in an
// integer, so that it comes back exactly, to the nanosecond, and sorts as a
// number. A duration is whole microseconds (the audit column duration_us).

package store

import (
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// EncodeTime is t's column value; the zero time is 0. (The zero time has
// no unix nanoseconds: it is before 1678.) A real time exactly at the
// unix epoch would read back as the zero time, which no token or call has.
func EncodeTime(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// DecodeTime is EncodeTime's inverse, in UTC.
func DecodeTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// EncodeDuration truncates d to microseconds.
func EncodeDuration(d time.Duration) int64 { return d.Microseconds() }

// DecodeDuration is EncodeDuration's inverse.
func DecodeDuration(us int64) time.Duration { return time.Duration(us) * time.Microsecond }

// Rows is what both drivers' result sets offer (database/sql's and pgx's),
// so that a row is read back into a record in one place.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// TokenColumns are the columns ScanTokens reads, in its order.
const TokenColumns = "id, name, role, hash, created_at, expires_at, revoked_at"

// ScanTokens reads every row of TokenColumns; the caller closes rows.
func ScanTokens(rows Rows) ([]Token, error) {
	var out []Token
	for rows.Next() {
		var t Token
		var created, expires, revoked int64
		if err := rows.Scan(&t.ID, &t.Name, &t.Role, &t.Hash, &created, &expires, &revoked); err != nil {
			return nil, err
		}
		t.CreatedAt, t.ExpiresAt, t.RevokedAt = DecodeTime(created), DecodeTime(expires), DecodeTime(revoked)
		out = append(out, t)
	}
	return out, rows.Err()
}

// AuditColumns are the columns ScanAudit reads, in its order, and the
// ones a store writes, in AppendAuditValues' order.
const AuditColumns = "time, subject, token_id, role, kind, name, backend, outcome, code, duration_us, origin, upstream, rule, redacted, hooks"

// AuditColumnList is AuditColumns as a list.
var AuditColumnList = strings.Split(AuditColumns, ", ")

// AuditInsert is the INSERT of n records, with arg(i) the i-th
// placeholder (from 1); values go in AppendAuditValues' order, record
// after record. Rows are inserted, and so get their ids, in the order
// listed.
func AuditInsert(n int, arg func(i int) string) string {
	var b strings.Builder
	b.WriteString("INSERT INTO audit (" + AuditColumns + ") VALUES ")
	for i := range n * len(AuditColumnList) {
		switch {
		case i == 0:
			b.WriteString("(")
		case i%len(AuditColumnList) == 0:
			b.WriteString("), (")
		default:
			b.WriteString(", ")
		}
		b.WriteString(arg(i + 1))
	}
	b.WriteString(")")
	return b.String()
}

// AppendAuditValues appends r's column values to args, in AuditColumns'
// order: what every store writes for a record. A text column's value is
// made Storable, then boxed once and kept (boxed): most repeat from
// record to record.
func AppendAuditValues(args []any, r AuditRecord) []any {
	return append(args, EncodeTime(r.Time), boxed.of(r.Subject), boxed.of(r.TokenID), boxed.of(r.Role), boxed.of(r.Kind),
		boxed.of(r.Name), boxed.of(r.Backend), boxed.of(r.Outcome), r.Code, EncodeDuration(r.Duration),
		boxed.of(r.Origin), boxed.of(r.Upstream), boxed.of(r.Rule), boxed.of(r.Redacted), boxed.of(r.Hooks))
}

// boxed keeps text column values in interfaces. Making a driver's
// argument of a string allocates; a record's role, kind, outcome,
// backend, entry and caller are mostly the last records' (6.5 of the 122
// allocations of a relayed call in BenchmarkGatewayToolsCall/gateway).
var boxed = boxes{m: map[string]any{}}

// maxBoxes bounds boxed: it is emptied when full, so that a stream of
// distinct values costs what it did without it.
const maxBoxes = 4096

type boxes struct {
	mu sync.Mutex
	m  map[string]any
}

// of is Storable(s) in an interface, the one kept for s when there is one.
func (b *boxes) of(s string) any {
	if s == "" {
		return "" // a constant: no allocation
	}
	b.mu.Lock()
	v, ok := b.m[s]
	if !ok {
		if len(b.m) >= maxBoxes {
			clear(b.m)
		}
		v = Storable(s)
		b.m[s] = v
	}
	b.mu.Unlock()
	return v
}

// StorableArgs is args with each string made Storable, for a statement
// of OAuthSQL or PinSQL. A value is so written as every store holds it.
// A key no store holds is looked up as it would have been kept. args is
// copied, only when a string changes.
func StorableArgs(args []any) []any {
	out, copied := args, false
	for i, a := range args {
		if s, ok := a.(string); ok {
			if k := Storable(s); k != s {
				if !copied {
					out, copied = slices.Clone(args), true
				}
				out[i] = k
			}
		}
	}
	return out
}

// Storable is s as every store keeps it in a text column: valid UTF-8
// without a NUL. PostgreSQL refuses a text value with either, and an
// audit record it refuses would hold up every answer waiting behind it.
// Each NUL and each run of invalid bytes becomes U+FFFD.
func Storable(s string) string {
	if strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// ScanAudit reads every row of AuditColumns, expecting about n; the
// caller closes rows.
func ScanAudit(rows Rows, n int) ([]AuditRecord, error) {
	out := make([]AuditRecord, 0, min(n, 1024))
	for rows.Next() {
		r, err := scanAuditRecord(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// scanAuditRecord reads one row of AuditColumns, after the columns the
// destinations before take (a page's query reads the id first).
func scanAuditRecord(rows Rows, before ...any) (AuditRecord, error) {
	var r AuditRecord
	var t, us int64
	dest := append(before, &t, &r.Subject, &r.TokenID, &r.Role, &r.Kind, &r.Name, &r.Backend, &r.Outcome, &r.Code, &us, &r.Origin, &r.Upstream, &r.Rule, &r.Redacted, &r.Hooks)
	if err := rows.Scan(dest...); err != nil {
		return AuditRecord{}, err
	}
	r.Time, r.Duration = DecodeTime(t), DecodeDuration(us)
	return r, nil
}

// AppendAuditRows appends the column values of each record to args, as
// AuditInsert of len(records) takes them.
func AppendAuditRows(args []any, records []AuditRecord) []any {
	for _, r := range records {
		args = AppendAuditValues(args, r)
	}
	return args
}
