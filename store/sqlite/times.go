// times.go is how a time.Time and a time.Duration are stored: a time as
// UTC unix nanoseconds in an INTEGER, so that it comes back exactly, to the
// nanosecond, and sorts as a number (the driver's text format would not);
// a duration as whole microseconds (the audit column duration_us).

package sqlite

import "time"

// encodeTime stores the zero time as 0. (The zero time has no unix
// nanoseconds: it is before 1678.) A real time exactly at the unix epoch
// would read back as the zero time, which no token or call has.
func encodeTime(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func decodeTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// encodeDuration truncates to microseconds.
func encodeDuration(d time.Duration) int64 { return d.Microseconds() }

func decodeDuration(us int64) time.Duration { return time.Duration(us) * time.Microsecond }
