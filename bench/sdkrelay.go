// sdkrelay.go is a peer: a minimal relay built on the official Go MCP SDK,
// the stack docker/mcp-gateway uses. One SDK client session reaches the
// backend (a stdio command, or a Streamable HTTP URL); an SDK server
// offers the backend's tools, each forwarding its call on that session,
// over the SDK's stateful Streamable HTTP handler. It is written the way
// the SDK invites: typed parameters and results on both sides.

package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// runSDKRelay is `bench sdk-relay -listen ADDR (-upstream URL | -upstream-command CMD)`.
func runSDKRelay(args []string) error {
	fs := flag.NewFlagSet("sdk-relay", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to serve on")
	upstream := fs.String("upstream", "", "backend Streamable HTTP URL")
	command := fs.String("upstream-command", "", "backend stdio command (split on spaces)")
	_ = fs.Parse(args)

	ctx := context.Background()
	var transport sdk.Transport
	switch {
	case *command != "":
		argv := strings.Fields(*command)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stderr = os.Stderr
		transport = &sdk.CommandTransport{Command: cmd}
	case *upstream != "":
		transport = &sdk.StreamableClientTransport{Endpoint: *upstream}
	default:
		return fmt.Errorf("-upstream or -upstream-command is required")
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "sdk-relay", Version: "1"}, nil)
	backend, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return fmt.Errorf("connecting the backend: %w", err)
	}
	defer backend.Close()

	server := sdk.NewServer(&sdk.Implementation{Name: "sdk-relay", Version: "1"}, nil)
	for tool, err := range backend.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("listing the backend's tools: %w", err)
		}
		server.AddTool(tool, forwardTool(backend))
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", serveCounters)
	mux.Handle("/mcp", sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	return serveSignalled(*listen, mux)
}

// forwardTool calls the same tool on the backend session.
func forwardTool(backend *sdk.ClientSession) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return backend.CallTool(ctx, &sdk.CallToolParams{Name: req.Params.Name, Arguments: req.Params.Arguments})
	}
}
