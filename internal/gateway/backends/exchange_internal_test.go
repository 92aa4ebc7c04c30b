package backends

import (
	"strconv"
	"testing"
	"time"
)

// The exchanged tokens kept do not grow with every person who ever
// called: past exchangesSwept, those past their time and the failed ones
// are dropped, and those still good and under way are kept.
func TestExchangedTokensPastTheirTimeAreSwept(t *testing.T) {
	b := &Backend{exchanges: map[string]*exchangedToken{}}
	done := func(renewAt time.Time, err error) *exchangedToken {
		e := &exchangedToken{ready: make(chan struct{}), renewAt: renewAt, err: err}
		close(e.ready)
		return e
	}
	for i := range exchangesSwept {
		b.exchanges["old-"+strconv.Itoa(i)] = done(time.Now().Add(-time.Second), nil)
	}
	b.exchanges["good"] = done(time.Now().Add(time.Hour), nil)
	b.exchanges["failed"] = done(time.Time{}, errSessionsClosed)
	b.exchanges["under way"] = &exchangedToken{ready: make(chan struct{})}
	b.xmu.Lock()
	b.sweepExchanged()
	b.xmu.Unlock()
	if len(b.exchanges) != 2 || b.exchanges["good"] == nil || b.exchanges["under way"] == nil {
		t.Errorf("kept %d: %v", len(b.exchanges), b.exchanges)
	}
}
