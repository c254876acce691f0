// Drives taskchat's /mcp with the official MCP TypeScript SDK, as an MCP
// host does: connect over Streamable HTTP with a bearer token, list the
// tools, add a task, list the tasks. It prints one JSON object with what
// the server answered, which internal/http's TestMCPWithTheTypeScriptSDK
// checks (and the database behind it).
//
//   node clients/mcp-client.mjs http://localhost:8080/mcp "$TOKEN"
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, token] = process.argv.slice(2);
if (!url || !token) {
  console.error('usage: node mcp-client.mjs <url of /mcp> <bearer token>');
  process.exit(2);
}

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: 'taskchat-node-client', version: '1.0.0' });
await client.connect(transport);

// callTool checks a result's structuredContent against the tool's
// outputSchema, so a result that broke its own schema would throw here.
const { tools } = await client.listTools();
const added = await client.callTool({ name: 'add_task', arguments: { title: 'Water the plants', description: 'the ferns too' } });
const listed = await client.callTool({ name: 'list_tasks', arguments: { status: 'pending' } });
const server = client.getServerVersion();
await client.close();

console.log(JSON.stringify({
  server,
  tools: tools.map(({ name, inputSchema, outputSchema, annotations }) => ({ name, inputSchema, outputSchema, annotations })),
  added,
  listed,
}));
