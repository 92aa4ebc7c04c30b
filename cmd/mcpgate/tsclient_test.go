package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/peers"
	"github.com/mcpgate/mcpgate/internal/testkit"
)

// startFixture runs `mcpgate fixture` on a free loopback port and returns
// its base URL.
func startFixture(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"fixture", "--listen", "127.0.0.1:0"}, args...)...)
	return testkit.Start(t, cmd).Await(t, fixtureAddrRE)
}

var fixtureAddrRE = regexp.MustCompile(`http://127\.0\.0\.1:\d+`)

type tsResult struct {
	Tools       []string        `json:"tools"`
	Simple      json.RawMessage `json:"simple"`
	InvalidArgs struct {
		Code int `json:"code"`
	} `json:"invalidArgs"`
	Sampling        json.RawMessage        `json:"sampling"`
	Elicitation     json.RawMessage        `json:"elicitation"`
	Progress        []any                  `json:"progress"`
	ErrorTool       struct{ IsError bool } `json:"errorTool"`
	Resource        json.RawMessage        `json:"resource"`
	Template        json.RawMessage        `json:"template"`
	UnknownResource struct {
		Code int `json:"code"`
	} `json:"unknownResource"`
	Prompt     json.RawMessage `json:"prompt"`
	Ping       json.RawMessage `json:"ping"`
	Completion struct {
		Completion struct{ Values []string } `json:"completion"`
	} `json:"completion"`
}

func runTSClient(t *testing.T, mode, target string) tsResult {
	t.Helper()
	p := peers.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	script, _ := filepath.Abs("testdata/tsclient.cjs")
	cmd := exec.CommandContext(ctx, p.Node22, script, mode, target)
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(p.Dir, "node_modules"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("TypeScript client (%s): %v\n%s", mode, err, stderr.String())
	}
	var r tsResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("TypeScript client output: %v\n%s", err, out)
	}
	return r
}

// The official TypeScript SDK, as a client, over each transport the
// fixture serves: every exchange works and errors keep their codes.
func TestTypeScriptClient(t *testing.T) {
	bin := testkit.Mcpgate(t)
	base := startFixture(t, bin)
	for _, tc := range []struct{ mode, target string }{
		{"stdio", bin},
		{"sse", base + "/sse"},
		{"streamable", base + "/mcp"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			r := runTSClient(t, tc.mode, tc.target)
			if !slices.Contains(r.Tools, "test_simple_text") || len(r.Tools) < 14 {
				t.Errorf("tools = %v", r.Tools)
			}
			wantContains(t, "simple", r.Simple, "This is a simple text response for testing.")
			if r.InvalidArgs.Code != -32602 {
				t.Errorf("invalid arguments: code %d, want -32602", r.InvalidArgs.Code)
			}
			wantContains(t, "sampling", r.Sampling, "LLM response: sampled: hello")
			wantContains(t, "elicitation", r.Elicitation, `action=accept`)
			if fmt.Sprint(r.Progress) != "[0 50 100 answer]" {
				t.Errorf("progress then answer = %v, want [0 50 100 answer]", r.Progress)
			}
			if !r.ErrorTool.IsError {
				t.Error("test_error_handling: isError not set")
			}
			wantContains(t, "resource", r.Resource, "This is the content of the static text resource.")
			wantContains(t, "template", r.Template, `Data for ID: 42`)
			if r.UnknownResource.Code != -32002 {
				t.Errorf("unknown resource: code %d, want -32002", r.UnknownResource.Code)
			}
			wantContains(t, "prompt", r.Prompt, "arg1='a', arg2='b'")
			if string(r.Ping) != "{}" {
				t.Errorf("ping = %s", r.Ping)
			}
			if !slices.Equal(r.Completion.Completion.Values, []string{"paris", "park", "party"}) {
				t.Errorf("completion = %v", r.Completion.Completion.Values)
			}
		})
	}
}

func wantContains(t *testing.T, what string, raw json.RawMessage, s string) {
	t.Helper()
	if !strings.Contains(string(raw), s) {
		t.Errorf("%s = %s, want it to contain %q", what, raw, s)
	}
}
