// The official TypeScript SDK 1.x client (tests/npm: @modelcontextprotocol/sdk) under the
// same conformance scenarios as kaja-conformance-client, for comparison. Same contract:
// the server URL is the last argument, the scenario in MCP_CONFORMANCE_SCENARIO, tool
// calls in MCP_CONFORMANCE_CONTEXT. It does what kaja's driver does: connect, list
// tools, call the context's tools (or add_numbers, or every tool), accept elicitations
// with the schema's defaults. Not part of the test suite; see the README.
import { Client } from '../npm/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StreamableHTTPClientTransport } from '../npm/node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js';
import { ElicitRequestSchema } from '../npm/node_modules/@modelcontextprotocol/sdk/dist/esm/types.js';

const url = process.argv[process.argv.length - 1];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = process.env.MCP_CONFORMANCE_CONTEXT ? JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT) : {};

function argumentsFor(tool) {
  const args = {};
  const properties = tool.inputSchema?.properties ?? {};
  for (const name of tool.inputSchema?.required ?? []) {
    const type = properties[name]?.type ?? 'string';
    args[name] = { integer: 1, number: 1.5, boolean: true, object: {}, array: [] }[type] ?? 'test';
  }
  return args;
}

const client = new Client({ name: 'sdk1-conformance-client', version: '1.0.0' },
                          { capabilities: { elicitation: {}, sampling: {}, roots: {} } });
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  const content = {};
  for (const [name, property] of Object.entries(request.params.requestedSchema?.properties ?? {})) {
    if (property.default !== undefined) content[name] = property.default;
  }
  return { action: 'accept', content };
});
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const { tools } = await client.listTools();
let calls = [];
if (context.toolCalls) calls = context.toolCalls;
else if (scenario === 'tools_call') calls = [{ name: 'add_numbers', arguments: { a: 5, b: 3 } }];
else if (scenario !== 'initialize') calls = tools.map((tool) => ({ name: tool.name, arguments: argumentsFor(tool) }));
for (const call of calls) {
  try {
    const result = await client.callTool(call);
    console.error(`tools/call ${call.name}: ${JSON.stringify(result)}`);
  } catch (error) {
    console.error(`tools/call ${call.name}: ${error.message}`);
  }
}
await client.close();
