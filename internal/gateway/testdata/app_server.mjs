// app_server.mjs is the smallest MCP App server, built with the MCP Apps
// SDK (@modelcontextprotocol/ext-apps) over the TypeScript SDK, on stdio:
// a tool forecast whose _meta.ui.resourceUri names ui://weather/forecast,
// an HTML App resource that says which server it is (argv[2]), with a CSP
// in its _meta. NODE_MODULES names the folder the peers are installed in.
const nm = process.env.NODE_MODULES;
const { McpServer } = await import(`${nm}/@modelcontextprotocol/sdk/dist/esm/server/mcp.js`);
const { StdioServerTransport } = await import(`${nm}/@modelcontextprotocol/sdk/dist/esm/server/stdio.js`);
const { registerAppTool, registerAppResource, RESOURCE_MIME_TYPE } = await import(`${nm}/@modelcontextprotocol/ext-apps/dist/src/server/index.js`);

const label = process.argv[2] ?? "app";
const uri = "ui://weather/forecast";
const server = new McpServer({ name: `weather-${label}`, version: "1.0.0" });
registerAppResource(server, "forecast_ui", uri, { description: "The forecast, drawn" }, async () => ({
  contents: [{
    uri, mimeType: RESOURCE_MIME_TYPE,
    text: `<!doctype html><title>Forecast</title><p id="who">${label}</p>`,
    _meta: { ui: { csp: { connectDomains: ["https://api.weather.example"] }, prefersBorder: true } },
  }],
}));
registerAppTool(server, "forecast", {
  description: "The weather forecast, with an App to show it.",
  _meta: { ui: { resourceUri: uri } },
}, async () => ({ content: [{ type: "text", text: `sunny at ${label}` }] }));
await server.connect(new StdioServerTransport());
