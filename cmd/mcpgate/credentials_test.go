package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway"
	"github.com/mcpgate/mcpgate/internal/store/sqlite"
	"github.com/mcpgate/mcpgate/internal/testkit"
)

// An admin stores a person's key from standard input, lists it without
// its value, and deletes it; the key opens under the gateway's vault key
// for that person and backend; a backend that is not per_user, a missing
// --for and a value given as an argument are refused; no output ever
// holds the value.
func TestTheCredentialsCommandStoresListsAndDeletesWithoutShowingAValue(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcpgate")
	}
	bin := testkit.Mcpgate(t)
	dir := t.TempDir()
	keyFile, cfgPath := filepath.Join(dir, "vault.key"), filepath.Join(dir, "mcpgate.yaml")
	writeText(t, keyFile, strings.Repeat("c3", 32)+"\n")
	writeText(t, cfgPath, fmt.Sprintf("listen: 127.0.0.1:0\nstore: %q\nauth: {jwt: {algorithm: HS256, secret_env: UNUSED, issuer: https://idp.example}}\n"+
		"vault: {key_file: %q}\nbackends:\n"+
		"  - {name: tickets, kind: http, url: \"http://127.0.0.1:1/mcp\", identity: per_user, credential: {vault: {header: X-Api-Key}}}\n"+
		"  - {name: shared, kind: http, url: \"http://127.0.0.1:1/mcp\"}\n"+
		"  - {name: exchanged, kind: http, url: \"http://127.0.0.1:1/mcp\", identity: per_user, credential: {exchange: {token_url: \"http://127.0.0.1:1/token\", client_id: gw, client_secret_from: CC_UNUSED}}}\n",
		filepath.Join(dir, "mcpgate.db"), keyFile))
	var seen strings.Builder
	run := func(stdin string, args ...string) (string, error) {
		t.Helper()
		out, errOut, err := cliRunIn(t, bin, stdin, append(args, "--config", cfgPath)...)
		seen.WriteString(out + errOut)
		return out + errOut, err
	}
	if out, err := run("sk-alice-secret\n", "credentials", "set", "tickets", "--for", "tok_aliceid00000"); err != nil {
		t.Fatalf("set for a token: %v\n%s", err, out)
	}
	if out, err := run("sk-bob-secret", "credentials", "set", "tickets", "--for", "bob@example.com"); err != nil {
		t.Fatalf("set for a subject: %v\n%s", err, out)
	}
	for what, args := range map[string][]string{
		"a shared backend":    {"credentials", "set", "shared", "--for", "tok_aliceid00000"},
		"an exchange backend": {"credentials", "set", "exchanged", "--for", "tok_aliceid00000"},
		"no --for":            {"credentials", "set", "tickets"},
		"a value argument":    {"credentials", "set", "tickets", "sk-in-argv", "--for", "tok_aliceid00000"},
	} {
		if out, err := run("sk-refused", args...); err == nil {
			t.Errorf("%s: accepted\n%s", what, out)
		}
	}
	out, err := run("", "credentials", "list")
	if err != nil || !strings.Contains(out, "tok_aliceid00000") || !strings.Contains(out, "bob@example.com (issuer https://idp.example)") {
		t.Fatalf("list: %v\n%s", err, out)
	}

	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(testkit.Context(t), filepath.Join(dir, "mcpgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	creds, err := gateway.OpenCredentials(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	for principal, want := range map[string]string{"tok_aliceid00000": "sk-alice-secret", "subject:https://idp.example\x01bob@example.com": "sk-bob-secret"} {
		if got, ok, err := creds.Get(testkit.Context(t), principal, "tickets"); err != nil || !ok || got != want {
			t.Errorf("%q's stored value: %q %v %v; want %q", principal, got, ok, err, want)
		}
	}
	_ = st.Close()

	if out, err := run("", "credentials", "delete", "tickets", "--for", "tok_aliceid00000"); err != nil {
		t.Fatalf("delete: %v\n%s", err, out)
	}
	if out, err := run("", "credentials", "delete", "tickets", "--for", "tok_aliceid00000"); err == nil {
		t.Errorf("a second delete: accepted\n%s", out)
	}
	if out, _ := run("", "credentials", "list", "--for", "tok_aliceid00000"); strings.Contains(out, "tickets") {
		t.Errorf("alice's list after the delete: %s", out)
	}
	if strings.Contains(seen.String(), "sk-") {
		t.Errorf("a value reached the output:\n%s", seen.String())
	}
}
