// secrets_gate_test.go pins Secrets and the gate through the wire (docs/wire.md
// §3.5): when DIVERGE.md declares secrets, every MCP exchange of both forms
// waits until the program has taken them; a program's refusal is relayed
// as it wrote it; a stdio program gets them as its environment; and no
// value ever reaches the proxy's log.

package proxy

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/wire"
)

const (
	liveSecret  = "sk-live-2b8e41d0"
	laterSecret = "sk-later-93c1a7ee"
	stdioSecret = "sk-stdio-5d0f2a9b"
	leakSecret  = "sk-leak-61e0c3b4"
)

// declaringSecrets is a DIVERGE.md that declares the secret API_KEY.
func declaringSecrets(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "DIVERGE.md")
	writeFile(t, path, "---\nsecrets: [API_KEY]\n---\n# A program that needs a key\n")
	return path
}

// feed sends the values and returns the one answer, after checking the
// finish follows it.
func feed(t *testing.T, f *framed, values string) wire.SecretsAnswer {
	t.Helper()
	ctx := testCtx(t)
	ch := f.open(t, ctx, wire.Secrets{Raw: json.RawMessage(values)}.Append(nil))
	p, err := ch.Next(ctx)
	if err != nil {
		t.Fatalf("secrets: %v", err)
	}
	ans, err := wire.DecodeSecretsAnswer(p)
	if err != nil {
		t.Fatalf("secrets answer %q: %v", p, err)
	}
	if _, err := ch.Next(ctx); !isEOF(err) {
		t.Errorf("secrets after the answer: %v; want the finish", err)
	}
	return ans
}

// noSecretIn fails if the log holds any of the values.
func noSecretIn(t *testing.T, logs *logWatch, values ...string) {
	t.Helper()
	text := logs.String()
	if text == "" {
		t.Fatal("the proxy logged nothing: the grep would prove nothing")
	}
	for _, v := range values {
		if strings.Contains(text, v) {
			t.Errorf("the log holds the secret value %q:\n%s", v, text)
		}
	}
}

func TestTheGateHoldsExchangesUntilTheProgramTakesTheSecrets(t *testing.T) {
	ctx := testCtx(t)
	logs := &logWatch{}
	prog, programURL := serveContractProgram(t)
	prog.let()
	up := newUpstream(t, UpstreamConfig{Kind: upstream.KindContract, URL: programURL, Logger: logs.logger()})
	base := serveProxy(t, Options{Upstream: up, InfoPath: declaringSecrets(t), Logger: logs.logger()})
	f := beginFramed(t, ctx, base)

	// One exchange of each form, and a notification stream, at the gate.
	framedList := f.start(t, ctx, "tools/list", "null")
	pathCall := perPath{base}.start(t, ctx, "tools/call", `{"name":"test_simple_text"}`)
	logs.waitFor(t, ctx, logAtGate, 2)
	held := func(when string) {
		t.Helper()
		if framedList.answered() || pathCall.answered() {
			t.Fatalf("%s: an MCP exchange was answered before the secrets were fed", when)
		}
		if n := prog.mcp.count("tools/list") + prog.mcp.count("tools/call test_simple_text"); n != 0 {
			t.Fatalf("%s: the program was asked %d MCP requests before the secrets were fed", when, n)
		}
	}
	held("before any feed")

	// Info is no MCP exchange: it passes the gate.
	info := f.open(t, ctx, wire.Info{}.Append(nil))
	if p, err := info.Next(ctx); err != nil || len(p) == 0 || p[0] != 0 {
		t.Errorf("Info at the gate: %q, %v; want [0] and the document", p, err)
	}

	// A refusal is relayed as the program wrote it, and opens nothing.
	if ans := feed(t, f, `{"API_KEY":"`+wrongSecret+`"}`); ans.Fed() || string(ans.Error) != secretsRefusal {
		t.Fatalf("refused secrets: %+v; want [1]%s", ans, secretsRefusal)
	}
	held("after a refusal")

	// Values that do not parse: a bare finish, and a log line that quotes none.
	bareFinish(t, ctx, f.open(t, ctx, append([]byte{8}, `{"API_KEY":"`+leakSecret+`","N":5}`...)), "secrets that do not parse")
	held("after secrets that do not parse")

	// Fed: the program has the values and the held exchanges go through.
	if ans := feed(t, f, `{"API_KEY":"`+liveSecret+`"}`); !ans.Fed() {
		t.Fatalf("secrets: refused with %s", ans.Error)
	}
	if got := recv(t, ctx, prog.secrets); got != `{"API_KEY":"`+liveSecret+`"}` {
		t.Errorf("the program was fed %s", got)
	}
	want(t, "the framed exchange held at the gate", result(t, framedList.wait(t, ctx)), `"test_simple_text"`)
	want(t, "the per-path exchange held at the gate", result(t, pathCall.wait(t, ctx)), "simple text")

	// A later feed is a new activation: the program gets the new values.
	if ans := feed(t, f, `{"API_KEY":"`+laterSecret+`"}`); !ans.Fed() {
		t.Fatalf("second feed: refused with %s", ans.Error)
	}
	if got := recv(t, ctx, prog.secrets); !strings.Contains(got, laterSecret) {
		t.Errorf("the program was fed %s on the second feed", got)
	}
	result(t, f.exchange(t, ctx, "tools/list", "null"))

	noSecretIn(t, logs, wrongSecret, leakSecret, liveSecret, laterSecret)
}

// A stdio program is (re)started with the values as its environment.
func TestAStdioProgramGetsTheSecretsAsItsEnvironment(t *testing.T) {
	ctx := testCtx(t)
	logs := &logWatch{}
	starts, startsEntry := startsFile(t)
	cmd, env := childCommand(startsEntry)
	up := newUpstream(t, UpstreamConfig{Kind: upstream.KindStdio, Command: cmd, Env: env, Logger: logs.logger()})
	base := serveProxy(t, Options{Upstream: up, InfoPath: declaringSecrets(t), Logger: logs.logger()})
	f := beginFramed(t, ctx, base)

	const readKey = `{"name":"env","arguments":{"name":"API_KEY"}}`
	held := f.start(t, ctx, "tools/call", readKey)
	logs.waitFor(t, ctx, logAtGate, 1)
	// A round trip the gate does not hold, on the same connection.
	if p, err := f.open(t, ctx, wire.Info{}.Append(nil)).Next(ctx); err != nil || len(p) == 0 || p[0] != 0 {
		t.Fatalf("Info at the gate: %q, %v", p, err)
	}
	if held.answered() || countLines(t, starts) != 0 {
		t.Fatal("an MCP exchange went through before the secrets were fed")
	}
	if ans := feed(t, f, `{"API_KEY":"`+stdioSecret+`"}`); !ans.Fed() {
		t.Fatalf("secrets: refused with %s", ans.Error)
	}
	if got := toolText(t, result(t, held.wait(t, ctx))); got != stdioSecret {
		t.Errorf("framed: the program's API_KEY is %q", got)
	}
	if got := toolText(t, result(t, perPath{base}.exchange(t, ctx, "tools/call", readKey))); got != stdioSecret {
		t.Errorf("per-path: the program's API_KEY is %q", got)
	}
	if n := countLines(t, starts); n != 1 {
		t.Errorf("the program was started %d times; want once, with the secrets", n)
	}
	noSecretIn(t, logs, stdioSecret)
}
