// A keep-alive client of the gateway's streamable HTTP endpoint: the
// official MCP TypeScript SDK's (installed by scripts/install-mcp-ts-sdk.sh),
// which reuses one connection as most Node-based agents do. It opens a
// session, calls TOOL COUNT times one after the other, closes the session,
// and prints one JSON object: how many calls took over 20 ms, the slowest,
// the median, the first answer's text, and how closing the session went.
//
//   node keepalive_client.js SDK_DIR URL TOOL COUNT [TOKEN]
"use strict";

const { createRequire } = require("node:module");
const { performance } = require("node:perf_hooks");

async function main() {
  const [sdkDir, url, tool, count, token] = process.argv.slice(2);
  const sdk = createRequire(`${sdkDir}/`);
  const { Client } = sdk("@modelcontextprotocol/sdk/client/index.js");
  const { StreamableHTTPClientTransport } = sdk(
    "@modelcontextprotocol/sdk/client/streamableHttp.js",
  );
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers },
  });
  const client = new Client({ name: "keepalive-test", version: "1.0.0" });
  await client.connect(transport);
  const durations = [];
  let first = null;
  for (let i = 0; i < Number(count); i++) {
    const started = performance.now();
    const result = await client.callTool({
      name: tool,
      arguments: { message: `call ${i}` },
    });
    durations.push(performance.now() - started);
    if (first === null) {
      first = result;
    }
  }
  let terminated = "ok";
  try {
    await transport.terminateSession();
  } catch (err) {
    terminated = String(err);
  }
  await client.close();
  const sorted = [...durations].sort((a, b) => a - b);
  process.stdout.write(
    JSON.stringify({
      calls: durations.length,
      over_20ms: durations.filter((d) => d > 20).length,
      median_ms: sorted[Math.floor(sorted.length / 2)],
      max_ms: sorted[sorted.length - 1],
      first,
      terminated,
    }) + "\n",
  );
}

main().catch((err) => {
  process.stderr.write(`${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
