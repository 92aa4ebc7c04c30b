// Package testkit is what the project's tests lean on: a bounded context,
// and a bounded wait for a condition no event announces. It checks that a
// test leaves no goroutine behind, builds the mcpgate binary once per test
// binary, and finds free loopback ports. Output is a buffer safe to log
// into, and Start runs a program with its stderr in one. It imports nothing
// of the project, so that every package's tests, the library's included,
// may use it.
package testkit

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Bound is how long a test waits for anything before it fails: long on
// a fast machine, enough on a loaded one.
const Bound = 30 * time.Second

// Context ends after Bound or when tb ends, so that a broken promise
// fails the test instead of hanging it.
func Context(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Bound)
	tb.Cleanup(cancel)
	return ctx
}

// WaitFor polls cond until it holds and fails tb after Bound. It is for
// a condition that no event announces (a background sweep's effect);
// where there is an event, wait for the event.
func WaitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(Bound)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("never happened within %v: %s", Bound, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// leakGrace is how long goroutines that are ending on their own (a queue
// draining into a stream closed a moment ago) may take on a loaded
// machine before the ones still there count as leaks.
const leakGrace = 10 * time.Second

// LeakCheck fails tb if it leaves goroutines behind. Call it first: its
// cleanup then runs after every other one.
func LeakCheck(tb testing.TB, opts ...goleak.Option) {
	tb.Helper()
	opts = append([]goleak.Option{goleak.IgnoreCurrent()}, opts...)
	tb.Cleanup(func() {
		for deadline := time.Now().Add(leakGrace); goleak.Find(opts...) != nil && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		goleak.VerifyNone(tb, opts...)
	})
}

// Main runs a package's tests, checks that they left no goroutine behind,
// removes what the kit built, and exits. Call it from TestMain.
func Main(m *testing.M, opts ...goleak.Option) {
	run(m, func(code int) int {
		if code == 0 {
			if err := goleak.Find(opts...); err != nil {
				fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
				return 1
			}
		}
		return code
	})
}

// Run is Main without the leak check, for packages whose tests leave
// processes' readers running by design.
func Run(m *testing.M) { run(m, func(code int) int { return code }) }

// AfterAll registers fn to run once every test of the binary has run
// (every -count and -cpu round), before Main or Run exits: for what the
// package's tests share, such as one server started on first use.
func AfterAll(fn func()) {
	afterMu.Lock()
	defer afterMu.Unlock()
	after = append(after, fn)
}

var (
	afterMu sync.Mutex
	after   []func()
)

func run(m *testing.M, check func(int) int) {
	mainRan = true
	code := m.Run()
	afterMu.Lock()
	for i := len(after) - 1; i >= 0; i-- {
		after[i]()
	}
	afterMu.Unlock()
	code = check(code)
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

var (
	mainRan bool
	built   struct {
		once      sync.Once
		dir, path string
		err       error
	}
)

// Mcpgate is the path of the mcpgate command, built once per test binary
// (its package's TestMain must call Main or Run, which removes it).
func Mcpgate(tb testing.TB) string {
	tb.Helper()
	if !mainRan {
		tb.Fatal("testkit.Mcpgate: the package's TestMain must call testkit.Main or testkit.Run")
	}
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "mcpgate-bin-"); built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "mcpgate")
		out, err := exec.Command("go", "build", "-o", built.path, "github.com/mcpgate/mcpgate/cmd/mcpgate").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		tb.Fatal(built.err)
	}
	return built.path
}

// FreePort is a loopback address no one listens on now ("127.0.0.1:N").
// Another process may take it before the test does; a test that can
// listen on port 0 itself should.
func FreePort(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Tamper returns s, a base64 token (a sealed state, a cookie), with one
// character in its middle changed. A character there carries six bits of
// the decoded bytes, so these always differ. A change at the end may touch
// only unused padding bits, or put back the characters already there, and
// a test of tampering then passes or fails by chance.
func Tamper(s string) string {
	if s == "" {
		return "A"
	}
	b := []byte(s)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}
