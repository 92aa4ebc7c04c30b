// replicas_test.go runs three `mcpgate serve` replicas behind a real
// HAProxy (round-robin, no stickiness), on a real PostgreSQL store and a
// real Redis, all on loopback ports, and checks what a team running
// replicas relies on: a token works on every replica and its revocation
// reaches every one within a second, open streams included; a burst limit
// holds across replicas; a TypeScript SDK session keeps working whichever
// replica serves it, through a SIGKILL and restart; and every answered
// call has exactly one audit record after each replica is stopped in turn
// under load.

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpgate/mcpgate/internal/fixture"
	"github.com/mcpgate/mcpgate/internal/peers"
	"github.com/mcpgate/mcpgate/internal/testkit"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// lineLog is a process's output, line by line, with a way to wait for a
// line.
type lineLog struct {
	mu      sync.Mutex
	lines   []string
	changed chan struct{}
}

func newLineLog() *lineLog { return &lineLog{changed: make(chan struct{})} }

func (l *lineLog) add(line string) {
	l.mu.Lock()
	l.lines = append(l.lines, line)
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

func (l *lineLog) mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}

// waitFor waits for a line after mark containing s.
func (l *lineLog) waitFor(t *testing.T, from int, s string, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		l.mu.Lock()
		for _, line := range l.lines[from:] {
			if strings.Contains(line, s) {
				l.mu.Unlock()
				return
			}
		}
		from = len(l.lines)
		ch := l.changed
		l.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no line with %q in %v", s, within)
		}
	}
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func (l *lineLog) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l.add(sc.Text())
	}
}

type replica struct {
	addr   string
	cmd    *exec.Cmd
	stderr *lineLog
	done   chan struct{}
	err    error
}

type replicaSet struct {
	t        *testing.T
	bin, cfg string
	replicas []*replica
	lb       peers.HAProxy
	pg       peers.Postgres
	redis    peers.RedisServer
	token    string // an admin token, created before the replicas started
}

func startReplicaSet(t *testing.T, n int) *replicaSet {
	t.Helper()
	bin := testkit.Mcpgate(t)
	s := &replicaSet{t: t, bin: bin, pg: peers.StartPostgres(t), redis: peers.StartRedis(t)}
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "session.key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("5a", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A backend every replica reaches, speaking 2026-07-28: its tasks are
	// polled through any replica.
	fh := mcphttp.NewHandler(fixture.New(fixture.Options{}), mcphttp.Options{Sessionless: true})
	fhServer := httptest.NewServer(fh)
	t.Cleanup(func() { fhServer.Close(); fh.Close() })
	s.cfg = filepath.Join(dir, "mcpgate.yaml")
	cfg := fmt.Sprintf(`store: %q
redis:
  url: %q
sessions:
  key_file: %q
audit:
  flush_every: 100ms
metrics:
  dashboard_url: https://grafana.example/d/mcpgate
rate_limits:
  entries:
    - name: fx__test_image_content
      rate: 0.001
      burst: 10
backends:
  - name: fx
    kind: stdio
    command: [%q, fixture, --stdio]
  - name: fh
    kind: http
    url: %q
  - name: f25
    kind: stdio
    command: [%q, fixture, --stdio, --sessionless=false]
`, s.pg.DSN(), s.redis.URL(), keyFile, bin, fhServer.URL+"/mcp", bin)
	if err := os.WriteFile(s.cfg, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	s.token = s.createToken("load", "admin")
	var addrs []string
	for range n {
		r := &replica{addr: testkit.FreePort(t)}
		s.replicas = append(s.replicas, r)
		addrs = append(addrs, r.addr)
	}
	for i := range s.replicas {
		s.start(i)
	}
	t.Cleanup(func() {
		for _, r := range s.replicas {
			s.signal(r, syscall.SIGKILL)
		}
	})
	s.lb = peers.StartHAProxy(t, addrs...)
	return s
}

func (s *replicaSet) createToken(name, role string) string {
	s.t.Helper()
	stdout, stderr, err := cliRun(s.t, s.bin, "token", "create", "--config", s.cfg, "--name", name, "--role", role)
	if err != nil {
		s.t.Fatalf("token create: %v\n%s", err, stderr)
	}
	return strings.TrimSpace(stdout)
}

// start runs replica i and waits until it is ready (its backend up).
func (s *replicaSet) start(i int) {
	t := s.t
	t.Helper()
	r := s.replicas[i]
	r.cmd = exec.Command(s.bin, "serve", "--config", s.cfg, "--listen", r.addr, "--verbose", "--config-poll", "0")
	r.cmd.Env = cliEnv(t)
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r.stderr, r.done = newLineLog(), make(chan struct{})
	errPipe, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	r.cmd.Stdout = io.Discard
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r.stderr.read(errPipe)
		r.err = r.cmd.Wait()
		close(r.done)
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + r.addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-r.done:
			t.Fatalf("replica %d exited (%v):\n%s", i, r.err, r.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %d not ready in 60s:\n%s", i, r.stderr)
		}
		time.Sleep(50 * time.Millisecond) // polling a child's readiness
	}
}

// signal sends sig to a running replica and waits for it to exit.
func (s *replicaSet) signal(r *replica, sig syscall.Signal) {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	select {
	case <-r.done:
		return
	default:
	}
	_ = r.cmd.Process.Signal(sig)
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		<-r.done
	}
}

func (s *replicaSet) url(i int) string { return "http://" + s.replicas[i].addr + "/mcp" }

// rpc is one JSON-RPC exchange over Streamable HTTP: the answer's status,
// session id and message (from a JSON body or the event stream).
type rpcReply struct {
	status  int
	session string
	msg     map[string]json.RawMessage
}

func rpc(ctx context.Context, url, token, session, body string) (rpcReply, error) {
	var h map[string]string
	if session != "" {
		h = map[string]string{"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"}
	}
	return rpcWith(ctx, url, token, body, h)
}

// tasksCaps are the capabilities of a 2026-07-28 caller that declared the
// tasks extension.
const tasksCaps = `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`

// rpcModern is one 2026-07-28 request of a caller that declared caps: no
// session, the revision's headers, entry the Mcp-Name (a tool's name, a
// task's id).
func rpcModern(ctx context.Context, url, token, caps, method, entry, params string) (rpcReply, error) {
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":` + caps + `}}}`
	h := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if entry != "" {
		h["Mcp-Name"] = entry
	}
	return rpcWith(ctx, url, token, body, h)
}

func rpcWith(ctx context.Context, url, token, body string, headers map[string]string) (rpcReply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return rpcReply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return rpcReply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return rpcReply{}, err
	}
	out := rpcReply{status: resp.StatusCode, session: resp.Header.Get("Mcp-Session-Id")}
	raw := b
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw = nil
		for _, line := range strings.Split(string(b), "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(data, `"id"`) {
				raw = []byte(data)
			}
		}
	}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &out.msg)
	}
	return out, nil
}

const replicaInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"replicas-test","version":"1"}}}`

func callBody(id int, tool string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, id, tool)
}

func (s *replicaSet) session(url, token string) string {
	s.t.Helper()
	r, err := rpc(context.Background(), url, token, "", replicaInit)
	if err != nil || r.status != http.StatusOK || r.session == "" {
		s.t.Fatalf("initialize: %v %d", err, r.status)
	}
	if r, err := rpc(context.Background(), url, token, r.session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil || r.status != http.StatusAccepted {
		s.t.Fatalf("initialized: %v %d", err, r.status)
	}
	return r.session
}

// redisCalls are the commands the Redis server has run, by name.
func (s *replicaSet) redisCalls() map[string]int64 {
	s.t.Helper()
	calls, err := s.redis.CommandCalls(context.Background())
	if err != nil {
		s.t.Fatal(err)
	}
	return calls
}

// callsServed is how many tools/call replica i counted.
func (s *replicaSet) callsServed(i int) int {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+s.replicas[i].addr+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "mcpgate_calls_total{") && strings.Contains(line, `kind="tool"`) {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			n += int(v)
		}
	}
	return n
}

func TestReplicasBehindHAProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL, Redis, HAProxy and three replicas")
	}
	s := startReplicaSet(t, 3)
	lb := s.lb.URL() + "/mcp"

	t.Run("a token created through one replica works on all and its revocation reaches all within a second, streams too", func(t *testing.T) {
		token := s.createToken("short-lived", "viewer")
		var streams []chan struct{}
		for i := range s.replicas {
			sid := s.session(s.url(i), token)
			// The stream is held on another replica than the one that
			// opened its session.
			other := (i + 1) % len(s.replicas)
			req, _ := http.NewRequest(http.MethodGet, s.url(other), nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("GET stream on replica %d: %v %v", other, err, resp)
			}
			ended := make(chan struct{})
			go func() { _, _ = io.Copy(io.Discard, resp.Body); resp.Body.Close(); close(ended) }()
			streams = append(streams, ended)
		}
		id := cliTokenIDRE.FindString(mustList(t, s))
		if id == "" {
			t.Fatal("no token id in token list")
		}
		if _, stderr, err := cliRun(t, s.bin, "token", "revoke", "--config", s.cfg, id); err != nil {
			t.Fatalf("token revoke: %v\n%s", err, stderr)
		}
		revoked := time.Now()
		for i, ended := range streams {
			select {
			case <-ended:
			case <-time.After(time.Until(revoked.Add(time.Second))):
				t.Errorf("a stream on replica %d is still open a second after the revocation", (i+1)%len(s.replicas))
			}
		}
		for i := range s.replicas {
			r, err := rpc(context.Background(), s.url(i), token, "", replicaInit)
			if err != nil || r.status != http.StatusUnauthorized {
				t.Errorf("replica %d after the revocation: %v %d, want 401", i, err, r.status)
			}
		}
	})

	t.Run("a burst limit of 10 admits exactly 10 of 100 concurrent calls over the replicas", func(t *testing.T) {
		sid := s.session(lb, s.token)
		var ok, limited, other atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 100 {
			wg.Go(func() {
				<-start
				r, err := rpc(context.Background(), lb, s.token, sid, callBody(i+1, "fx__test_image_content"))
				switch {
				case err != nil:
					other.Add(1)
				case r.msg["result"] != nil:
					ok.Add(1)
				case strings.Contains(string(r.msg["error"]), `"code":-32000`):
					limited.Add(1)
				default:
					other.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		if ok.Load() != 10 || limited.Load() != 90 {
			t.Errorf("%d admitted, %d rate limited, %d otherwise; want 10 and 90", ok.Load(), limited.Load(), other.Load())
		}
	})

	t.Run("each replica's console says it shows itself and links the fleet's dashboard; its metrics say Redis and PostgreSQL answer", func(t *testing.T) {
		for i := range s.replicas {
			base := strings.TrimSuffix(s.url(i), "/mcp")
			for path, wants := range map[string][]string{
				"/admin/":  {`id="fleet"`, `<a href="https://grafana.example/d/mcpgate" rel="noreferrer noopener">`},
				"/metrics": {`mcpgate_dependency_up{dependency="redis"} 1`, `mcpgate_dependency_up{dependency="store"} 1`},
			} {
				req, _ := http.NewRequest(http.MethodGet, base+path, nil)
				req.Header.Set("Authorization", "Bearer "+s.token)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				for _, want := range wants {
					if !strings.Contains(string(body), want) {
						t.Errorf("replica %d's %s lacks %s", i, path, want)
					}
				}
			}
		}
	})

	t.Run("a TypeScript SDK session keeps working across replicas and through a SIGKILL and restart", func(t *testing.T) {
		p := peers.Require(t)
		const killed = 1
		script, _ := filepath.Abs("testdata/replicas.cjs")
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, p.Node22, script, lb, s.url(killed), s.token)
		cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(p.Dir, "node_modules"))
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = stdin.Close(); _ = cmd.Wait() }()
		out := make(chan map[string]any, 16)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				var m map[string]any
				if json.Unmarshal(sc.Bytes(), &m) == nil {
					out <- m
				}
			}
			close(out)
		}()
		next := func(what string) map[string]any {
			t.Helper()
			select {
			case m, ok := <-out:
				if !ok {
					t.Fatalf("the client ended before %s:\n%s", what, stderr.String())
				}
				if m["fatal"] != nil {
					t.Fatalf("the client failed: %v", m["fatal"])
				}
				return m
			case <-ctx.Done():
				t.Fatalf("no %s from the client:\n%s", what, stderr.String())
			}
			return nil
		}
		say := func(line string) { _, _ = io.WriteString(stdin, line+"\n") }
		calls := func(n int, when string) {
			t.Helper()
			say("calls " + strconv.Itoa(n))
			m := next("calls")
			if int(m["ok"].(float64)) != n {
				t.Fatalf("%s: %v of %d calls answered; failed: %v", when, m["ok"], n, m["failed"])
			}
		}
		hello := next("connected")
		session, _ := hello["connected"].(string)
		if !strings.HasPrefix(session, "m1.") || hello["version"] != "2025-11-25" {
			t.Fatalf("connected %v", hello)
		}
		calls(9, "round-robin over three replicas")
		for i := range s.replicas {
			if s.callsServed(i) == 0 {
				t.Errorf("replica %d served none of the session's calls: the balancer did not spread them", i)
			}
		}
		// A call in flight on the replica killed fails; no other call does.
		mark := s.replicas[killed].stderr.mark()
		say("slow")
		next("slowSent")
		s.replicas[killed].stderr.waitFor(t, mark, "authenticated", 30*time.Second)
		s.signal(s.replicas[killed], syscall.SIGKILL)
		if m := next("the slow call's end"); m["slow"] != "failed" {
			t.Errorf("the call in flight on the killed replica: %v", m)
		}
		calls(9, "while a replica is down")
		s.start(killed)
		// The balancer takes the replica back at its next health check.
		for deadline := time.Now().Add(30 * time.Second); s.callsServed(killed) == 0; {
			if time.Now().After(deadline) {
				t.Fatal("the restarted replica serves none of the session's calls")
			}
			calls(3, "after the restart")
			time.Sleep(50 * time.Millisecond) // polling the balancer's health check
		}
		say("quit")
	})

	t.Run("a task a backend made through one replica is polled and cancelled through the others, by its caller alone", func(t *testing.T) {
		ctx := context.Background()
		modern := func(i int, token, method, entry, params string) map[string]json.RawMessage {
			t.Helper()
			r, err := rpcModern(ctx, s.url(i), token, tasksCaps, method, entry, params)
			if err != nil || r.status != http.StatusOK {
				t.Fatalf("%s through replica %d: %v %d %s", method, i, err, r.status, r.msg["error"])
			}
			return r.msg
		}
		var task struct {
			ResultType, TaskID, Status string
		}
		makeTask := func() {
			t.Helper()
			created := modern(0, s.token, "tools/call", "fh__slow_compute", `"name":"fh__slow_compute","arguments":{"seconds":60}`)
			if json.Unmarshal(created["result"], &task) != nil || task.ResultType != "task" || task.TaskID == "" {
				t.Fatalf("tools/call of slow_compute: %s %s, want a CreateTaskResult", created["result"], created["error"])
			}
		}
		// A first task, polled through another replica, loads the route
		// scripts into Redis: the first use of each is an EVALSHA refused
		// and an EVAL, which the counts below would take for two.
		makeTask()
		modern(1, s.token, "tasks/get", task.TaskID, `"taskId":"`+task.TaskID+`"`)
		modern(0, s.token, "tasks/cancel", task.TaskID, `"taskId":"`+task.TaskID+`"`)
		scripts := func() int64 { c := s.redisCalls(); return c["evalsha"] + c["eval"] }
		before := scripts()
		makeTask()
		if n := scripts() - before; n != 1 {
			t.Errorf("making the task ran %d Redis scripts, want 1 (docs/scaling.md)", n)
		}
		status := func(i int, token string) string {
			t.Helper()
			m := modern(i, token, "tasks/get", task.TaskID, `"taskId":"`+task.TaskID+`"`)
			var got struct{ Status string }
			if m["error"] != nil || json.Unmarshal(m["result"], &got) != nil {
				return "error " + string(m["error"])
			}
			return got.Status
		}
		before = scripts()
		for i := range s.replicas {
			if got := status(i, s.token); got != "working" {
				t.Errorf("tasks/get through replica %d: %s, want working", i, got)
			}
		}
		if n := scripts() - before; n != 2 {
			t.Errorf("the first polls through three replicas ran %d Redis scripts, want 2: one per replica that did not make the task", n)
		}
		before = scripts()
		if got := status(1, s.token); got != "working" || scripts() != before {
			t.Errorf("a second poll through replica 1: %s and %d Redis scripts, want working from memory", got, scripts()-before)
		}
		other := s.createToken("another-caller", "admin")
		if got := status(1, other); !strings.Contains(got, "-32602") {
			t.Errorf("another caller's tasks/get: %s, want -32602 as for an unknown task", got)
		}
		if m := modern(2, s.token, "tasks/cancel", task.TaskID, `"taskId":"`+task.TaskID+`"`); m["error"] != nil {
			t.Errorf("tasks/cancel through replica 2: %s", m["error"])
		}
		if got := status(1, s.token); got != "cancelled" {
			t.Errorf("tasks/get through replica 1 after the cancel: %s, want cancelled", got)
		}
	})

	t.Run("a 2025 session's answer to a request one replica sent reaches it through another", func(t *testing.T) {
		before := s.redisCalls()["publish"]
		sessionAnswersThroughAnotherReplica(t, s)
		if n := s.redisCalls()["publish"] - before; n != 1 {
			t.Errorf("%d publishes, want 1: the answer handed to the replica that asked (docs/scaling.md)", n)
		}
	})

	// fh speaks 2026-07-28: its own requestState, sealed for the caller,
	// opens on any replica. f25 speaks 2025: its call waits on the replica
	// that relayed it, and the others hand the retries to it.
	for _, c := range []struct {
		backend  string
		handOffs int64 // rounds handed to the replica holding the call
	}{{"fh", 0}, {"f25", 2}} {
		t.Run("a 2026-07-28 caller answers "+c.backend+"'s questions through any replica, each round through another", func(t *testing.T) {
			before := s.redisCalls()
			modernRounds(t, s, c.backend+"__test_input_required_result_multi_round")
			after := s.redisCalls()
			if n, back := after["publish"]-before["publish"], after["rpush"]-before["rpush"]; n != c.handOffs || back != c.handOffs {
				t.Errorf("%d retries handed over and %d answers sent back, want %d of each (docs/scaling.md)", n, back, c.handOffs)
			}
		})
	}

	t.Run("every answered call has one audit record after a SIGTERM of each replica in turn under load", func(t *testing.T) {

		const tool = "fx__test_audio_content"
		stop := make(chan struct{})
		var answered, unanswered atomic.Int64
		var problems sync.Map
		var wg sync.WaitGroup
		for w := range 6 {
			sid := s.session(lb, s.token)
			wg.Go(func() {
				for n := 1; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					r, err := rpc(ctx, lb, s.token, sid, callBody(w*100000+n, tool))
					cancel()
					switch {
					case err == nil && r.msg["id"] != nil:
						answered.Add(1)
					default:
						unanswered.Add(1)
						problems.Store(fmt.Sprintf("%v status %d", err, r.status), true)
					}
				}
			})
		}
		for i := range s.replicas {
			before := answered.Load()
			s.signal(s.replicas[i], syscall.SIGTERM)
			if s.replicas[i].err != nil {
				t.Errorf("replica %d after SIGTERM: %v\n%s", i, s.replicas[i].err, s.replicas[i].stderr)
			}
			s.start(i)
			for answered.Load() < before+20 { // load keeps flowing
				time.Sleep(10 * time.Millisecond) // polling a counter the workers advance
			}
		}
		close(stop)
		wg.Wait()
		problems.Range(func(k, _ any) bool { t.Logf("unanswered: %v", k); return true })
		if unanswered.Load() != 0 {
			t.Errorf("%d calls unanswered (of %d)", unanswered.Load(), answered.Load()+unanswered.Load())
		}
		conn, err := pgx.Connect(context.Background(), s.pg.DSN())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		var records int64
		deadline := time.Now().Add(15 * time.Second)
		for {
			if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM audit WHERE name = $1`, tool).Scan(&records); err != nil {
				t.Fatal(err)
			}
			if records >= answered.Load() || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond) // polling the replicas' batched writes
		}
		t.Logf("%d calls answered, %d audit records", answered.Load(), records)
		if records != answered.Load() {
			t.Errorf("%d audit records for %d answered calls", records, answered.Load())
		}
	})
}

var tokenLineRE = regexp.MustCompile(`(?m)^.*short-lived.*$`)

func mustList(t *testing.T, s *replicaSet) string {
	t.Helper()
	stdout, stderr, err := cliRun(t, s.bin, "token", "list", "--config", s.cfg)
	if err != nil {
		t.Fatalf("token list: %v\n%s", err, stderr)
	}
	return tokenLineRE.FindString(stdout)
}

// modernRounds calls tool, which asks a name and then a colour, as a
// 2026-07-28 caller: each round through another replica of s.
func modernRounds(t *testing.T, s *replicaSet, tool string) {
	t.Helper()
	round := func(i int, extra string) map[string]json.RawMessage {
		t.Helper()
		r, err := rpcModern(context.Background(), s.url(i), s.token, `{"elicitation":{}}`, "tools/call", tool, `"name":"`+tool+`","arguments":{}`+extra)
		if err != nil || r.status != http.StatusOK {
			t.Fatalf("round through replica %d: %v %d", i, err, r.status)
		}
		return r.msg
	}
	// asked is the key and the requestState of an InputRequiredResult
	// asking one thing.
	asked := func(i int, m map[string]json.RawMessage) (key, state string) {
		t.Helper()
		var res struct {
			ResultType    string
			RequestState  string
			InputRequests map[string]json.RawMessage
		}
		if json.Unmarshal(m["result"], &res) != nil || res.ResultType != "input_required" || len(res.InputRequests) != 1 || res.RequestState == "" {
			t.Fatalf("round through replica %d: %s %s, want an InputRequiredResult asking one thing", i, m["result"], m["error"])
		}
		for k := range res.InputRequests {
			key = k
		}
		return key, res.RequestState
	}
	answer := func(key, field, value, st string) string {
		return `,"inputResponses":{"` + key + `":{"action":"accept","content":{"` + field + `":"` + value + `"}}},"requestState":"` + st + `"`
	}
	key, st := asked(0, round(0, ""))
	key, st = asked(1, round(1, answer(key, "name", "Ada", st)))
	done := round(2, answer(key, "color", "blue", st))
	if !strings.Contains(string(done["result"]), "Ada likes blue") {
		t.Errorf("the last round, through a third replica: %s %s, want the tool's answer", done["result"], done["error"])
	}
}

// sessionAnswersThroughAnotherReplica calls a tool that asks the client
// to sample, on a 2025 session through replica 0, and answers the request
// through replica 1: the call's stream on replica 0 then ends with the
// tool's result.
func sessionAnswersThroughAnotherReplica(t *testing.T, s *replicaSet) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"replicas-test","version":"1"}}}`
	r, err := rpc(ctx, s.url(0), s.token, "", init)
	if err != nil || r.session == "" {
		t.Fatalf("initialize: %v %d", err, r.status)
	}
	sid := r.session
	if r, err := rpc(ctx, s.url(0), s.token, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil || r.status != http.StatusAccepted {
		t.Fatalf("initialized: %v %d", err, r.status)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.url(0),
		strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fx__test_sampling","arguments":{"prompt":"ping"}}}`))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Authorization": "Bearer " + s.token, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 0, 64<<10), 1<<20)
	next := func() map[string]json.RawMessage {
		t.Helper()
		for lines.Scan() {
			if data, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
				var m map[string]json.RawMessage
				if json.Unmarshal([]byte(data), &m) == nil {
					return m
				}
			}
		}
		t.Fatalf("the call's stream ended: %v", lines.Err())
		return nil
	}
	m := next()
	if string(m["method"]) != `"sampling/createMessage"` {
		t.Fatalf("the stream's first message %v, want the sampling request", m)
	}
	answer := `{"jsonrpc":"2.0","id":` + string(m["id"]) + `,"result":{"role":"assistant","content":{"type":"text","text":"pong"},"model":"m"}}`
	if r, err := rpc(ctx, s.url(1), s.token, sid, answer); err != nil || r.status != http.StatusAccepted {
		t.Fatalf("the answer through replica 1: %v %d", err, r.status)
	}
	for {
		m := next()
		if string(m["id"]) == "7" {
			if !strings.Contains(string(m["result"]), "pong") {
				t.Errorf("the call's answer: %s %s, want the sampled pong in it", m["result"], m["error"])
			}
			return
		}
	}
}
