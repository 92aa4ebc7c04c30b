package wiremcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpgate/mcpgate/internal/proxy"
	"github.com/mcpgate/mcpgate/internal/upstream"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
	"github.com/mcpgate/mcpgate/wiremcp"
)

// MCP over the container wire: a proxy stands in front of an MCP server
// (as `mcpgate proxy` does in a tool container), and Dial makes of its
// framed connection a Conn that an mcp.Client speaks through, as if to
// the server itself.
func ExampleDial() {
	server := mcp.NewServer(mcp.Options{Info: mcp.Implementation{Name: "echo", Version: "1"}})
	if err := server.AddTools(&mcp.Tool{Name: "echo", SkipValidation: true,
		Handler: func(_ context.Context, _ *mcp.Request, args json.RawMessage) (json.RawMessage, error) {
			return mcp.Result(mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(string(args))}})
		}}); err != nil {
		panic(err)
	}
	h := mcphttp.NewHandler(server, mcphttp.Options{})
	defer h.Close()
	mcpSrv := httptest.NewServer(h)
	defer mcpSrv.Close()

	up, err := proxy.NewUpstream(proxy.UpstreamConfig{Kind: upstream.KindHTTP, URL: mcpSrv.URL})
	if err != nil {
		panic(err)
	}
	defer up.Close()
	dir, _ := os.MkdirTemp("", "wiremcp-example")
	defer os.RemoveAll(dir)
	wireSrv := httptest.NewServer(proxy.NewServer(proxy.Options{Upstream: up, InfoPath: filepath.Join(dir, "none")}))
	defer wireSrv.Close()

	ctx := context.Background()
	conn, err := wiremcp.Dial(ctx, "ws"+strings.TrimPrefix(wireSrv.URL, "http"), wiremcp.DialOptions{Name: "echo"})
	if err != nil {
		panic(err)
	}
	client := mcp.NewClient(conn, mcp.ClientOptions{Info: mcp.Implementation{Name: "example", Version: "1"}})
	defer client.Close()
	if _, err := client.Initialize(ctx); err != nil {
		panic(err)
	}
	res, err := client.Call(ctx, "tools/call", json.RawMessage(`{"name":"echo","arguments":{"say":"over the wire"}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(res))
	// Output:
	// {"content":[{"type":"text","text":"{\"say\":\"over the wire\"}"}]}
}
