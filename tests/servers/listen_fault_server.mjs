// A stdio MCP server at 2026-07-28 (plain JSON-RPC lines, no SDK) whose subscriptions/listen
// streams misbehave on purpose, for kaja's client to cope with:
//
//   node listen_fault_server.mjs [deaf]
//
// - A filter naming a URI that starts with test://refused is answered with a JSON-RPC error,
//   which ends that stream.
// - A filter naming a URI that starts with test://silent is never acknowledged.
// - Any other filter is acknowledged and its stream stays open until cancelled. In "deaf"
//   mode cancels are ignored, so streams kaja closed keep sending updates.
// Tools: touch {uri} sends notifications/resources/updated on every open stream that follows
// the URI, each tagged with its stream's subscription id, then answers with how many it
// sent; filters answers with the resourceSubscriptions of every listen request so far, in
// order, as JSON text.
import { onStdinMessages } from './stdio_lines.mjs';

const deaf = process.argv[2] === 'deaf';
const filters = [];
const open = new Map(); // listen request id -> its URIs

function send(message) {
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\n');
}

function text(id, value) {
  send({ id, result: { content: [{ type: 'text', text: String(value) }] } });
}

function listen(id, params) {
  const uris = params?.notifications?.resourceSubscriptions ?? [];
  filters.push(uris);
  if (uris.some((uri) => uri.startsWith('test://refused'))) {
    send({ id, error: { code: -32602, message: 'this server refuses that resource' } });
    return;
  }
  open.set(id, uris);
  if (uris.some((uri) => uri.startsWith('test://silent'))) return;
  send({
    method: 'notifications/subscriptions/acknowledged',
    params: { _meta: { 'io.modelcontextprotocol/subscriptionId': id } },
  });
}

function touch(id, uri) {
  let sent = 0;
  for (const [stream, uris] of open) {
    if (!uris.includes(uri)) continue;
    send({
      method: 'notifications/resources/updated',
      params: { uri, _meta: { 'io.modelcontextprotocol/subscriptionId': stream } },
    });
    ++sent;
  }
  text(id, sent);
}

function handle(message) {
  const { id, method, params } = message;
  if (method === 'notifications/cancelled') {
    if (!deaf) open.delete(params?.requestId);
    return;
  }
  if (id === undefined) return;
  if (method === 'server/discover') {
    send({
      id,
      result: {
        supportedVersions: ['2026-07-28'],
        capabilities: { tools: {}, resources: { subscribe: true } },
        serverInfo: { name: 'listen-fault', version: '1.0.0' },
      },
    });
  } else if (method === 'subscriptions/listen') {
    listen(id, params);
  } else if (method === 'tools/list') {
    send({
      id,
      result: {
        tools: [
          { name: 'touch', inputSchema: { type: 'object' } },
          { name: 'filters', inputSchema: { type: 'object' } },
        ],
      },
    });
  } else if (method === 'tools/call' && params?.name === 'touch') {
    touch(id, params.arguments?.uri);
  } else if (method === 'tools/call' && params?.name === 'filters') {
    text(id, JSON.stringify(filters));
  } else {
    send({ id, error: { code: -32601, message: `unknown method ${method}` } });
  }
}

onStdinMessages(handle);
