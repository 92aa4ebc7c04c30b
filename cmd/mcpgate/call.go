// call.go is `mcpgate call`: a command-line client of the container wire,
// for people and scripts. It makes one exchange with a proxy — on the
// framed connection (the tools begin, then one channel) or in the per-path
// form — and prints the answer's JSON as it arrived. Stdout holds the
// answer and nothing else; the exit status says what kind of answer it
// was (see the exit* constants), so a script needs no parsing to branch.

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpgate/mcpgate/wire"
	"github.com/mcpgate/mcpgate/wiremcp"
)

// The exit statuses of mcpgate call.
const (
	exitAnswered  = 0 // [0]: the answer is on stdout
	exitRefused   = 1 // [1]: the error (ErrorData, or the program's refusal) is on stdout
	exitNotServed = 2 // a bare finish: the proxy received the request and does not serve it
	exitNoAnswer  = 3 // no answer: bad usage, no connection, the connection ended, an unreadable answer
)

// exitStatus is an error that sets the process's exit status; main exits
// with it. err, when set, is printed on stderr first.
type exitStatus struct {
	code int
	err  error
}

func (e *exitStatus) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitStatus) Unwrap() error { return e.err }

func exitWith(code int, format string, args ...any) error {
	return &exitStatus{code: code, err: fmt.Errorf(format, args...)}
}

// The asks of mcpgate call, named as the command line names them.
const (
	askListTools     = "tools/list"
	askCallTool      = "tools/call"
	askListResources = "resources/list"
	askReadResource  = "resources/read"
	askNotifications = "notifications"
	askInfo          = "info"
	askSecrets       = "secrets"
)

// ask is one parsed request: what to ask and its payload.
type ask struct {
	name   string
	params []byte // the MCP params, or the secrets' values JSON
	// secrets is how many values a secrets ask carries (for the message
	// after Fed: the names and values are never printed).
	secrets int
}

// framedOnly reports whether the ask exists only on the framed connection:
// Info, secrets, and the MCP requests of tag 9.
func (a ask) framedOnly() bool {
	switch a.name {
	case askInfo, askSecrets:
		return true
	case askNotifications:
		return false
	}
	return wiremcp.Path(a.name) == ""
}

func callCommand() *cobra.Command {
	var (
		framed, perPath bool
		arguments       string
		count           int
	)
	cmd := &cobra.Command{
		Use:   "call URL METHOD [ARGS]",
		Short: "Make one exchange with a proxy over the container wire",
		Long: "Make one exchange with an mcpgate proxy (or any server of the container wire) and print\n" +
			"the answer's JSON on stdout, as it arrived:\n\n" +
			"  mcpgate call ws://127.0.0.1:14979 tools/list [PARAMS]\n" +
			"  mcpgate call ws://127.0.0.1:14979 tools/call NAME ['{\"a\":1}']\n" +
			"  mcpgate call ws://127.0.0.1:14979 resources/list [PARAMS]\n" +
			"  mcpgate call ws://127.0.0.1:14979 resources/read URI\n" +
			"  mcpgate call ws://127.0.0.1:14979 prompts/get '{\"name\":\"p\"}'     (any other request: framed only)\n" +
			"  mcpgate call ws://127.0.0.1:14979 notifications [--count N]   (one JSON line each)\n" +
			"  mcpgate call ws://127.0.0.1:14979 info                        (framed only)\n" +
			"  mcpgate call ws://127.0.0.1:14979 secrets @values.json|JSON   (framed only; values are never printed)\n\n" +
			"--framed (the default) begins a framed connection with --arguments and asks on a\n" +
			"channel; a proxy serves one framed connection at a time, and a later one re-attaches (its\n" +
			"--arguments must then be the first begin's). --per-path uses /tool/* instead.\n\n" +
			"Exit status: 0 answered; 1 answered with an error or a refusal (printed on stdout); 2 not\n" +
			"served (a bare finish); 3 no answer (bad usage, no connection, the connection ended).",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 2 {
				return &exitStatus{code: exitNoAnswer, err: errors.New("call needs a URL and a METHOD")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if perPath && cmd.Flags().Changed("framed") && framed {
				return exitWith(exitNoAnswer, "--framed and --per-path exclude each other")
			}
			base, err := wireBase(args[0])
			if err != nil {
				return &exitStatus{code: exitNoAnswer, err: err}
			}
			a, err := parseAsk(args[1], args[2:])
			if err != nil {
				return &exitStatus{code: exitNoAnswer, err: err}
			}
			if count < 0 {
				return exitWith(exitNoAnswer, "--count must not be negative")
			}
			c := &caller{out: cmd.OutOrStdout(), errOut: cmd.ErrOrStderr(), count: count}
			if perPath {
				if a.framedOnly() {
					return exitWith(exitNoAnswer, "%s exists only on the framed connection; drop --per-path", a.name)
				}
				if cmd.Flags().Changed("arguments") {
					return exitWith(exitNoAnswer, "--arguments is the framed connection's begin; the per-path form has none")
				}
				return c.perPath(cmd.Context(), base, a)
			}
			begin := []byte(arguments)
			if !json.Valid(begin) {
				return exitWith(exitNoAnswer, "--arguments is not JSON")
			}
			return c.framed(cmd.Context(), base, begin, a)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitStatus{code: exitNoAnswer, err: err}
	})
	f := cmd.Flags()
	f.BoolVar(&framed, "framed", true, "use the framed connection at /")
	f.BoolVar(&perPath, "per-path", false, "use the per-path form (/tool/*)")
	f.StringVar(&arguments, "arguments", "null", "the tools begin's arguments, JSON (framed only)")
	f.IntVar(&count, "count", 0, "notifications: stop after N (0: until interrupted or the stream ends)")
	return cmd
}

// wireBase turns the URL given into the proxy's base URL, without a
// trailing slash: ws://, wss://, http:// and https:// are taken as they
// are, a bare host:port as ws://.
func wireBase(raw string) (string, error) {
	if !strings.Contains(raw, "://") {
		raw = "ws://" + raw
	}
	scheme, rest, _ := strings.Cut(raw, "://")
	switch scheme {
	case "ws", "wss", "http", "https":
	default:
		return "", fmt.Errorf("URL %q: want ws://HOST:PORT", raw)
	}
	host, path, _ := strings.Cut(rest, "/")
	if host == "" || strings.Trim(path, "/") != "" {
		return "", fmt.Errorf("URL %q: want the proxy's address alone, like ws://127.0.0.1:14979", raw)
	}
	return scheme + "://" + host, nil
}

// parseAsk reads METHOD and its arguments.
func parseAsk(method string, args []string) (ask, error) {
	a := ask{name: method}
	want := func(min, max int, usage string) error {
		if len(args) < min || len(args) > max {
			return fmt.Errorf("usage: mcpgate call URL %s %s", method, usage)
		}
		return nil
	}
	switch method {
	case askListTools, askListResources:
		if err := want(0, 1, "[PARAMS]"); err != nil {
			return a, err
		}
		a.params = []byte("null")
		if len(args) == 1 {
			a.params = []byte(args[0])
		}
		if err := wire.CheckListParams(a.params); err != nil {
			return a, fmt.Errorf("%s params: %w", method, err)
		}
	case askCallTool:
		if err := want(1, 2, "NAME [ARGUMENTS]"); err != nil {
			return a, err
		}
		a.params = appendJSONMember([]byte(`{"name":`), args[0])
		if len(args) == 2 {
			a.params = append(append(a.params, `,"arguments":`...), args[1]...)
		}
		a.params = append(a.params, '}')
		if err := wire.CheckCallToolParams(a.params); err != nil {
			return a, fmt.Errorf("tools/call arguments must be a JSON object: %w", err)
		}
	case askReadResource:
		if err := want(1, 1, "URI"); err != nil {
			return a, err
		}
		a.params = append(appendJSONMember([]byte(`{"uri":`), args[0]), '}')
	case askNotifications, askInfo:
		if err := want(0, 0, ""); err != nil {
			return a, err
		}
	case askSecrets:
		if err := want(1, 1, "@FILE|JSON"); err != nil {
			return a, err
		}
		return secretsAsk(args[0])
	default:
		if !strings.Contains(method, "/") || !wiremcp.Carried(method) {
			return a, fmt.Errorf("unknown METHOD %q: want tools/list, tools/call, resources/list, resources/read, notifications, info, secrets or another MCP request (prompts/get, ...)", method)
		}
		if err := want(0, 1, "[PARAMS]"); err != nil {
			return a, err
		}
		if len(args) == 1 {
			if a.params = []byte(args[0]); !json.Valid(a.params) {
				return a, fmt.Errorf("%s params are not JSON", method)
			}
		}
	}
	return a, nil
}

func appendJSONMember(b []byte, s string) []byte {
	enc, _ := json.Marshal(s) // a string always encodes
	return append(b, enc...)
}

// secretsAsk reads the values from @FILE or the argument itself. They are
// checked with the wire's own decoder, whose errors quote no value, and
// sent as they were written.
func secretsAsk(arg string) (ask, error) {
	values := []byte(arg)
	if path, ok := strings.CutPrefix(arg, "@"); ok {
		b, err := os.ReadFile(path)
		if err != nil {
			return ask{}, fmt.Errorf("secrets: %w", err) // names the file, quotes nothing in it
		}
		values = b
	}
	req, err := wire.DecodeChannelRequest(wire.Secrets{Raw: values}.Append(nil))
	if err != nil {
		return ask{}, fmt.Errorf("secrets: %w", err)
	}
	return ask{name: askSecrets, params: values, secrets: len(req.(wire.Secrets).Values)}, nil
}
