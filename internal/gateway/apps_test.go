// apps_test.go runs MCP Apps (SEP-1865) through the gateway: two backends
// built with the MCP Apps SDK serve the same ui:// URI, and each caller
// reaches each backend's App under a URI of its own.

package gateway_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/peers"
	"github.com/mcpgate/mcpgate/internal/testkit"
)

func TestMCPAppsOfTwoBackendsEachKeepTheirOwn(t *testing.T) {
	p := peers.Require(t)
	script, err := filepath.Abs(filepath.Join("testdata", "app_server.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPGATE_TEST_NODE_MODULES", filepath.Join(p.Dir, "node_modules"))
	app := func(name, extra string) string {
		return "  - {name: " + name + ", kind: stdio, command: [" + strconv.Quote(p.Node22) + ", " + strconv.Quote(script) + ", " + name + "]," +
			" env_from: {NODE_MODULES: MCPGATE_TEST_NODE_MODULES}" + extra + "}\n"
	}
	e := gwStart(t, "listen: 127.0.0.1:0\nbackends:\n"+app("a", "")+app("b", `, min_roles: [{kind: resource, name: "ui://weather/*", role: editor}]`))
	bkRun(t, e.gw)
	editor, _ := e.token("ed", "editor")
	viewer, _ := e.token("vi", "viewer")
	ctx := testkit.Context(t)
	c := e.dial(gwStreamable, gwBearer(editor))
	testkit.WaitFor(t, "both Apps listed", func() bool {
		res, err := c.Call(ctx, "tools/list", nil)
		return err == nil && strings.Contains(string(res), "a__forecast") && strings.Contains(string(res), "b__forecast")
	})
	res, err := c.Call(ctx, "tools/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	var tools struct {
		Tools []struct {
			Name string
			Meta map[string]json.RawMessage `json:"_meta"`
		}
	}
	if err := json.Unmarshal(res, &tools); err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if !strings.HasSuffix(tool.Name, "__forecast") {
			continue
		}
		want := `"ui://` + strings.TrimSuffix(tool.Name, "__forecast") + `/weather/forecast"`
		if got := string(tool.Meta["ui"]); got != `{"resourceUri":`+want+`}` || string(tool.Meta["ui/resourceUri"]) != want {
			t.Errorf("%s's _meta: ui %s, ui/resourceUri %s; want %s in both", tool.Name, got, tool.Meta["ui/resourceUri"], want)
		}
	}
	res, err = c.Call(ctx, "resources/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := gwNames(t, res, "resources", "uri"); !slices.Contains(got, "ui://a/weather/forecast") || !slices.Contains(got, "ui://b/weather/forecast") {
		t.Fatalf("resources %v: want each backend's App under its own URI", got)
	}
	for _, who := range []string{"a", "b"} {
		uri := "ui://" + who + "/weather/forecast"
		res, err := c.Call(ctx, "resources/read", json.RawMessage(`{"uri":"`+uri+`"}`))
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		var read struct {
			Contents []struct {
				URI, MimeType, Text string
				Meta                json.RawMessage `json:"_meta"`
			}
		}
		if err := json.Unmarshal(res, &read); err != nil || len(read.Contents) != 1 {
			t.Fatalf("read %s: %s", uri, res)
		}
		got := read.Contents[0]
		if got.URI != uri || got.MimeType != "text/html;profile=mcp-app" || !strings.Contains(got.Text, `<p id="who">`+who+`</p>`) ||
			string(got.Meta) != `{"ui":{"csp":{"connectDomains":["https://api.weather.example"]},"prefersBorder":true}}` {
			t.Errorf("read %s: %+v", uri, got)
		}
		if res, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"`+who+`__forecast","arguments":{}}`)); err != nil || !strings.Contains(string(res), "sunny at "+who) {
			t.Errorf("%s__forecast: %s %v", who, res, err)
		}
	}
	// Min roles apply to App resources as to any resource, by the
	// backend's own URI.
	v := e.dial(gwStreamable, gwBearer(viewer))
	res, err = v.Call(ctx, "resources/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := gwNames(t, res, "resources", "uri"); !slices.Contains(got, "ui://a/weather/forecast") || slices.Contains(got, "ui://b/weather/forecast") {
		t.Errorf("a viewer's resources %v: want a's App and not b's (editor and up)", got)
	}
	if _, err := v.Call(ctx, "resources/read", json.RawMessage(`{"uri":"ui://b/weather/forecast"}`)); err == nil {
		t.Error("a viewer read b's App")
	}
}
