// Regenerates the raw tool lists behind tools.json: install the servers
// (`npm install --ignore-scripts` of the packages and versions tools.json
// names, plus @modelcontextprotocol/sdk), then `node dump-tools.mjs` in that
// folder writes tools-raw.json ({server: [{name, description, inputSchema}]}).
// The credentials are dummies: listing tools needs none of them to be real.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { writeFileSync } from "fs";

const servers = [
  ["github", "mcp-server-github", [], { GITHUB_PERSONAL_ACCESS_TOKEN: "x" }],
  ["gitlab", "mcp-server-gitlab", [], { GITLAB_PERSONAL_ACCESS_TOKEN: "x" }],
  ["slack", "mcp-server-slack", [], { SLACK_BOT_TOKEN: "x", SLACK_TEAM_ID: "x" }],
  ["filesystem", "mcp-server-filesystem", ["."], {}],
  ["memory", "mcp-server-memory", [], {}],
  ["google-maps", "mcp-server-google-maps", [], { GOOGLE_MAPS_API_KEY: "x" }],
  ["brave-search", "mcp-server-brave-search", [], { BRAVE_API_KEY: "x" }],
  ["everything", "mcp-server-everything", ["stdio"], {}],
  ["notion", "notion-mcp-server", [], { NOTION_TOKEN: "x" }],
  ["playwright", "playwright-mcp", [], {}],
  ["kubernetes", "mcp-server-kubernetes", [], {}],
  ["desktop-commander", "desktop-commander", [], {}],
  ["mongodb", "mongodb-mcp-server", [], {}],
  ["firecrawl", "firecrawl-mcp", [], { FIRECRAWL_API_KEY: "fc-x" }],
  ["context7", "context7-mcp", [], {}],
  ["hubspot", "mcp-hubspot", [], { PRIVATE_APP_ACCESS_TOKEN: "x" }],
  ["linear", "mcp-server-linear", [], { LINEAR_API_KEY: "x" }],
];
const out = {};
for (const [name, bin, args, env] of servers) {
  try {
    const transport = new StdioClientTransport({
      command: `node_modules/.bin/${bin}`, args, env: { ...process.env, ...env }, stderr: "ignore",
    });
    const client = new Client({ name: "dump-tools", version: "1" });
    await client.connect(transport);
    const { tools } = await client.listTools();
    out[name] = tools.map((t) => ({ name: t.name, description: t.description ?? "", inputSchema: t.inputSchema }));
    console.error(name, tools.length);
    await client.close();
  } catch (e) {
    console.error(name, "failed:", e.message);
  }
}
writeFileSync("tools-raw.json", JSON.stringify(out));
