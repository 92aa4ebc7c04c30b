package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testkit"
)

// --log-format takes text, json or auto; anything else is refused before
// the command runs, naming the flag.
func TestLogFormatFlagRefusesAnUnknownFormat(t *testing.T) {
	root := rootCommand()
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	db := filepath.Join(t.TempDir(), "mcpgate.db")
	root.SetArgs([]string{"token", "list", "--store", db, "--log-format", "xml"})
	err := root.Execute()
	if err == nil || !strings.Contains(err.Error(), "--log-format") {
		t.Fatalf("--log-format xml: %v, want an error naming the flag", err)
	}
	if _, statErr := os.Stat(db); statErr == nil {
		t.Error("the command ran (its store was created) despite the refused flag")
	}
}

// Auto logs JSON to what is not a terminal — a pipe, a file, /dev/null
// (a character device, but no person reads it) — and text or json, when
// asked, is what it says.
func TestLogFormatChoosesTheHandler(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	outs := map[string]*os.File{"pipe": w, "file": file}
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		defer null.Close()
		outs["/dev/null"] = null
	}
	for name, out := range outs {
		for format, text := range map[string]bool{logAuto: false, logJSON: false, logText: true} {
			_, isText := logHandler(format, out, slog.LevelInfo).(*slog.TextHandler)
			if isText != text {
				t.Errorf("%s to a %s: text %v, want %v", format, name, isText, text)
			}
		}
	}
}

// The built binary logs JSON to a pipe by default, and text when asked.
func TestLogFormatOfTheBinary(t *testing.T) {
	bin := testkit.Mcpgate(t)
	for _, c := range []struct {
		name  string
		flags []string
		json  bool
	}{
		{"auto on a pipe", nil, true},
		{"text on a pipe", []string{"--log-format", "text"}, false},
		{"json", []string{"--log-format", "json"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"serve", "--no-auth", "--listen", "127.0.0.1:0", "--store", filepath.Join(t.TempDir(), "m.db")}, c.flags...)
			p := cliStart(t, bin, args...)
			line := waitStderrLine(t, p.stderr, "serving")
			p.stop(t)
			var rec map[string]any
			isJSON := json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "serving"
			if isJSON != c.json {
				t.Errorf("log line %q: JSON %v, want %v", line, isJSON, c.json)
			}
			if !c.json && !strings.Contains(line, "level=INFO msg=serving") {
				t.Errorf("log line %q is not slog's text", line)
			}
		})
	}
}

// waitStderrLine polls a child's stderr, within a bound, for the first
// line holding msg, and returns it.
func waitStderrLine(t *testing.T, stderr interface{ String() string }, msg string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, l := range strings.Split(stderr.String(), "\n") {
			l = strings.TrimRight(l, "\r")
			if bytes.Contains([]byte(l), []byte(`"msg":"`+msg+`"`)) || strings.Contains(l, "msg="+msg+" ") {
				return l
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q log line in 30s; stderr:\n%s", msg, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
