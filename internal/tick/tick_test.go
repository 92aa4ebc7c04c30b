package tick_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/tick"
)

func TestEveryStopsWhenTheJobSaysSoOrTheContextEnds(t *testing.T) {
	calls := 0
	tick.Every(context.Background(), time.Millisecond, func(time.Time) bool {
		calls++
		return calls < 3
	})
	if calls != 3 {
		t.Errorf("the job ran %d times, want 3 (it said stop on the third)", calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tick.Every(ctx, time.Millisecond, func(time.Time) bool {
		t.Error("the job ran after its context ended")
		return false
	})
}

// Sleep reports true when its time passed, false when stop came first,
// however long the time: a closed stop ends an hour's sleep at once.
func TestSleepEndsWhenItsTimePassesOrStopComesFirst(t *testing.T) {
	if !tick.Sleep(time.Millisecond, make(chan struct{})) {
		t.Error("a sleep whose stop never came reported false")
	}
	stop := make(chan struct{})
	close(stop)
	if tick.Sleep(time.Hour, stop) {
		t.Error("a sleep whose stop had come reported true")
	}
}
