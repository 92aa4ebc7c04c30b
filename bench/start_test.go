package main

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestAProcessThatExitsBeforeAnsweringEndsTheWaitWithItsLog(t *testing.T) {
	e := &env{ps: &procs{logs: t.TempDir()}}
	defer e.ps.stopAll()
	never := func(context.Context) (caller, error) { return nil, errors.New("connection refused") }
	err := e.start(context.Background(), &target{name: "x", open: never}, "x", nil, "sh", "-c", "echo 'listen: address already in use' >&2; exit 3")
	if err == nil {
		t.Fatal("started, want an error")
	}
	for _, want := range []string{"exited (exit status 3) before it answered", "listen: address already in use"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q: want %q in it", err, want)
		}
	}
}

func TestAServerWhosePortWasTakenIsStartedAgainOnFreshAddresses(t *testing.T) {
	busy := &exitedError{name: "x", err: errors.New("exit status 1"), log: "listen tcp 127.0.0.1:4242: bind: address already in use"}
	for _, tc := range []struct {
		name  string
		errs  []error // what each try returns
		calls int
		fails bool
	}{
		{"taken once, then free: two tries", []error{busy, nil}, 2, false},
		{"taken every time: three tries, then the error", []error{busy, busy, busy, nil}, busyPortTries, true},
		{"another exit: no second try", []error{&exitedError{name: "x", err: errors.New("exit status 1"), log: "bad configuration"}, nil}, 1, true},
		{"no answer from a running server: no second try", []error{errors.New("x: no answer within 30s"), nil}, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			_, err := onFreshAddrs(func() (int, error) {
				calls++
				return calls, tc.errs[calls-1]
			})
			if calls != tc.calls || (err != nil) != tc.fails {
				t.Errorf("%d tries, err %v; want %d tries, failing %v", calls, err, tc.calls, tc.fails)
			}
		})
	}
}
