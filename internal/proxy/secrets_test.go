// secrets_test.go pins how secret values travel: into a stdio server's
// environment (and a re-feed restarts it with the new ones), and never into
// a log line or an error message.

package proxy

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/upstream"
)

func TestSecretsBecomeTheStdioServersEnvironmentAndNeverALogLine(t *testing.T) {
	ctx := testCtx(t)
	var logs logBuffer
	path, env := startsFile(t)
	cmd, base := childCommand(env)
	u := newUpstream(t, UpstreamConfig{Kind: upstream.KindStdio, Command: cmd, Env: base, Logger: logs.logger(),
		Restart: upstream.Backoff{Base: time.Millisecond}})
	const name = "PROXY_TEST_SECRET"
	values := []string{"hunter2-\u03a9mega-1f3a9", "second-7c1e-value"}

	for i, v := range values {
		refusal, err := u.FeedSecrets(ctx, map[string]string{name: v})
		if err != nil || refusal != nil {
			t.Fatalf("feed %d: %s, %v", i, refusal, err)
		}
		if got := toolText(t, call(t, ctx, u, "env", `{"name":"`+name+`"}`)); got != v {
			t.Errorf("feed %d: the server's %s is %q, want the fed value", i, name, got)
		}
	}
	if n := countLines(t, path); n != 2 {
		t.Errorf("started %d times for two feeds, want 2 (each feed restarts)", n)
	}
	// A death and a restart with the secrets in place log more lines.
	if _, _, err := u.Exchange(ctx, "tools/call", []byte(`{"name":"exit"}`)); err == nil {
		t.Fatal("the exit tool answered")
	}
	call(t, ctx, u, "test_simple_text", "{}")

	const bad = "bad-value-9d2\x00tail"
	_, err := u.FeedSecrets(ctx, map[string]string{name: bad})
	if err == nil || strings.Contains(err.Error(), "bad-value-9d2") || !strings.Contains(err.Error(), name) {
		t.Errorf("a value with NUL: err %v, want one naming %s and quoting nothing of the value", err, name)
	}
	_, err = u.FeedSecrets(ctx, map[string]string{"A=B": values[0]})
	if err == nil || strings.Contains(err.Error(), values[0]) {
		t.Errorf("a bad name: err %v", err)
	}

	_ = u.Close()
	out := logs.String()
	if !strings.Contains(out, "upstream server started") || !strings.Contains(out, "exited") {
		t.Fatalf("the log did not capture the supervisor:\n%s", out)
	}
	for _, v := range append(values, "bad-value-9d2") {
		if strings.Contains(out, v) {
			t.Errorf("the log contains the secret value %q:\n%s", v, out)
		}
	}
}

func TestRedactRemovesEveryFormOfAValue(t *testing.T) {
	values := map[string]string{"A": `p<a"ss`, "B": "", "C": "plain"}
	body := `{"error":"bad p\u003ca\"ss and p<a\"ss and plain","raw":p<a"ss}`
	got := string(redact([]byte(body), values))
	for _, form := range []string{`p\u003ca\"ss`, `p<a\"ss`, `p<a"ss`, "plain"} {
		if strings.Contains(got, form) {
			t.Errorf("%q survives in %s", form, got)
		}
	}
	if strings.Count(got, redacted) != 4 {
		t.Errorf("redacted %s", got)
	}
}
