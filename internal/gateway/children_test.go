// children_test.go holds the small backend servers of the partial-failure
// and fidelity tests, run as real processes: TestMain calls pfChildMain
// first, and when bkChildEnv names one of them the test binary becomes
// that server (its name, and where it listens or what stops it starting,
// in its arguments) and exits when it ends.
//
// Every identifier here starts with "pf" or "fd" so that it cannot collide
// with the other tests of this package.

package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
	"github.com/mcpgate/mcpgate/stdio"
)

// Child roles, as the value of bkChildEnv.
const (
	pfRoleStdio    = "partial"       // args: name, down-flag file
	pfRoleHTTP     = "partial-http"  // args: name, listen address
	fdRoleStdio    = "fidelity"      // args: the scheme of its resource
	suRoleSlow     = "slow-start"    // args: name, how long it takes to start (a Go duration)
	pfDownExitCode = 3               // a stdio child refusing to start
	pfListening    = "listening on " // the HTTP child's first line on stdout
)

// pfChildMain turns the test binary into the backend bkChildEnv names, or
// returns when it names none of these.
func pfChildMain() {
	var err error
	switch os.Getenv(bkChildEnv) {
	case pfRoleStdio:
		if _, statErr := os.Stat(os.Args[2]); statErr == nil {
			fmt.Fprintln(os.Stderr, "down flag present: refusing to start")
			os.Exit(pfDownExitCode)
		}
		err = stdio.Serve(context.Background(), pfServer(os.Args[1]), os.Stdin, os.Stdout, stdio.Options{})
	case pfRoleHTTP:
		err = pfServeHTTP(os.Args[1], os.Args[2])
	case fdRoleStdio:
		err = stdio.Serve(context.Background(), fdServer(os.Args[1]), os.Stdin, os.Stdout, stdio.Options{})
	case suRoleSlow: // a server that takes a while to start (npx fetching a package)
		d, _ := time.ParseDuration(os.Args[2])
		time.Sleep(d)
		err = stdio.Serve(context.Background(), pfServer(os.Args[1]), os.Stdin, os.Stdout, stdio.Options{})
	case ejRoleStdio:
		err = (&ejServer{journal: os.Args[1]}).serveStdio(os.Stdin, os.Stdout)
	case pgRoleProgram:
		err = pgServeProgram() // postgres_pair_test.go
	case pvRoleStdio:
		err = stdio.Serve(context.Background(), pvStdioServer(), os.Stdin, os.Stdout, stdio.Options{}) // personal_test.go
	default:
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// pfServeHTTP serves pfServer over Streamable HTTP on addr, says where on
// stdout, and ends when its stdin closes (the test is gone).
func pfServeHTTP(name, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("%s%s\n", pfListening, ln.Addr())
	h := mcphttp.NewHandler(pfServer(name), mcphttp.Options{})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); os.Exit(0) }()
	return http.Serve(ln, mux)
}

// pfText is a tools/call result of one text.
func pfText(s string) (json.RawMessage, error) {
	return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(s)}})
}

// pfServer is the backend of the partial-failure test: a tool, a resource
// and a prompt of its own name, its process id, and a tool that reports
// progress once and then holds until it is cancelled or the process dies.
func pfServer(name string) *mcp.Server {
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: name, Version: "1"}})
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(s.AddTools(
		&mcp.Tool{Name: "hello", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return pfText("hello from " + name)
		}},
		&mcp.Tool{Name: "pid", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return pfText(strconv.Itoa(os.Getpid()))
		}},
		&mcp.Tool{Name: "hang", Handler: func(ctx context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			if err := r.Progress(ctx, 1, 0, "holding"); err != nil {
				return nil, err
			}
			<-ctx.Done()
			return nil, ctx.Err()
		}},
	))
	must(s.AddResources(&mcp.Resource{URI: name + "://doc", Name: "doc",
		Read: func(_ context.Context, _ *mcp.Request, uri string, _ map[string]string) (json.RawMessage, error) {
			return mcp.Result(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{mcp.TextResource(uri, "text/plain", name)}})
		}}))
	must(s.AddPrompts(&mcp.Prompt{Name: "greet",
		Get: func(context.Context, *mcp.Request, map[string]string) (json.RawMessage, error) {
			return mcp.Result(mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent("hi from " + name)}}})
		}}))
	return s
}

// fdResult is a tools/call result no typed struct would keep: pretty
// printed, unknown members, _meta, numbers beyond float64 (and one that
// underflows it), isError with structuredContent.
const fdResult = `{
  "content": [
    {"type": "text", "text": "exact \u00e9 <&>", "annotations": {"audience": ["user"], "x-unknown": true}}
  ],
  "structuredContent": {"big": 123456789012345678901234567890, "tiny": -0.0000000000000000000001e-400, "f": 1.50, "huge": 1E+400},
  "isError": true,
  "_meta": {"vendor.example/trace": "abc", "n": -0.0},
  "unknownField": [1, 2, {"deep": null}]
}`

// fdResource is a resources/read result of the same kind.
const fdResource = `{
  "contents": [
    {"uri": "fid://doc", "mimeType": "text/plain", "text": "x", "x-extra": 18446744073709551617}
  ],
  "_meta": {"vendor.example/etag": "W/\"1\""},
  "nextThing": null
}`

// fdErrors are JSON-RPC errors a backend defines, by tool name: a code in
// the server range and a positive one, each with nested data and a member
// JSON-RPC does not define.
var fdErrors = map[string]string{
	"error_32099": `{
    "code": -32099,
    "message": "custom failure",
    "data": {"retryAfter": 123456789012345678901234567890, "why": ["a", {"deep": [1.0e-400]}]},
    "x-unknown-member": {"kept": true}
}`,
	"error42": `{"code": 42, "message": "the answer", "data": {"nested": {"n": -0.0, "e": 1E+400, "s": "\u00e9"}}}`,
}

// fdServer is the fidelity backend; its resource is scheme://doc. Its
// tool "params" answers with the raw params it received, as the text of
// its result, so that a test can see what the gateway forwarded.
func fdServer(scheme string) *mcp.Server {
	s := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "fidelity", Version: "1"}})
	tools := []*mcp.Tool{
		{Name: "result", Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(fdResult), nil
		}},
		{Name: "params", Handler: func(_ context.Context, r *mcp.Request, _ json.RawMessage) (json.RawMessage, error) {
			return pfText(string(r.Params))
		}},
	}
	for name, raw := range fdErrors {
		tools = append(tools, &mcp.Tool{Name: name, Handler: func(context.Context, *mcp.Request, json.RawMessage) (json.RawMessage, error) {
			return nil, jsonrpc.RawError(json.RawMessage(raw))
		}})
	}
	if err := s.AddTools(tools...); err != nil {
		panic(err)
	}
	if err := s.AddResources(&mcp.Resource{URI: scheme + "://doc", Name: "doc",
		Read: func(context.Context, *mcp.Request, string, map[string]string) (json.RawMessage, error) {
			return json.RawMessage(fdResource), nil
		}}); err != nil {
		panic(err)
	}
	return s
}

// pfReadListening reads the HTTP child's address from its first line.
func pfReadListening(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("child did not say where it listens: %w (%q)", err, line)
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), pfListening)
	if !ok {
		return "", fmt.Errorf("child said %q", line)
	}
	return addr, nil
}
