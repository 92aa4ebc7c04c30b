// columns.go is how a time.Time and a time.Duration are kept in a
// store's columns, the same in every store: a time as UTC unix
// nanoseconds in an integer, so that it comes back exactly, to the
// nanosecond, and sorts as a number; a duration as whole microseconds
// (the audit column duration_us).

package store

import "time"

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
