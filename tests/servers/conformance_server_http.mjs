// Streamable HTTP front for conformance_server.mjs: /mcp on 127.0.0.1. 2025-era traffic gets a
// session of its own (Mcp-Session-Id, a GET stream, DELETE), which the 2025 scenarios that ask
// the client mid-call or open several streams need; 2026-07-28 traffic is served statelessly,
// one server instance per request. Host headers other than localhost are refused (DNS
// rebinding protection).

import { randomUUID } from 'node:crypto';
import { fstatSync } from 'node:fs';
import http from 'node:http';

// Node's http module speaks IncomingMessage/ServerResponse; the SDK speaks the web
// Request/Response, so each exchange is converted both ways here.
async function toWebRequest(req, res, port) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) value.forEach((item) => headers.append(name, item));
    else if (value !== undefined) headers.set(name, value);
  }
  const controller = new AbortController();
  res.on('close', () => controller.abort());
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && chunks.length > 0;
  return new Request(`http://127.0.0.1:${port}${req.url}`, {
    method: req.method,
    headers,
    body: hasBody ? Buffer.concat(chunks) : undefined,
    signal: controller.signal,
  });
}

async function writeWebResponse(response, res) {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  res.on('close', () => reader.cancel().catch(() => {}));
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    res.write(value);
  }
  res.end();
}

function jsonRpcError(status, code, message) {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

// Keeps every event a 2025-era session sent, so that a client whose SSE stream was cut can
// resume it with Last-Event-ID.
class MemoryEventStore {
  events = [];

  async storeEvent(streamId, message) {
    const eventId = `${streamId}_${this.events.length}`;
    this.events.push({ eventId, streamId, message });
    return eventId;
  }

  async getStreamIdForEventId(eventId) {
    return this.events.find((event) => event.eventId === eventId)?.streamId;
  }

  async replayEventsAfter(lastEventId, { send }) {
    const index = this.events.findIndex((event) => event.eventId === lastEventId);
    if (index < 0) throw new Error(`unknown event id ${lastEventId}`);
    const { streamId } = this.events[index];
    for (const event of this.events.slice(index + 1)) {
      if (event.streamId === streamId) await send(event.eventId, event.message);
    }
    return streamId;
  }
}

// Serves 2025-era requests: one sessionful transport and server instance per session.
function makeLegacyHandler({ sdk, makeServer, report }) {
  const sessions = new Map();
  return async (request) => {
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId) {
      const transport = sessions.get(sessionId);
      if (!transport) return jsonRpcError(404, -32001, 'Session not found');
      return transport.handleRequest(request);
    }
    if (request.method !== 'POST') {
      return jsonRpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    }
    let body;
    try {
      body = await request.clone().json();
    } catch {
      return jsonRpcError(400, -32700, 'Parse error');
    }
    if (!sdk.isInitializeRequest(body)) {
      return jsonRpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    }
    const transport = new sdk.WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => sessions.set(id, transport),
      eventStore: new MemoryEventStore(),
      retryInterval: 500,
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    const server = makeServer({ era: 'legacy' });
    server.server.onerror = report;
    await server.connect(transport);
    return transport.handleRequest(request, { parsedBody: body });
  };
}

export function serveOnHttp({ sdk, makeServer, legacyOnly, port, report, listChanged }) {
  const legacy = makeLegacyHandler({ sdk, makeServer, report });
  const modern = legacyOnly
    ? undefined
    : sdk.createMcpHandler(makeServer, { legacy: 'reject', onerror: report });
  if (modern) {
    listChanged.notify = (kind) =>
      kind === 'tools' ? modern.notify.toolsChanged() : modern.notify.promptsChanged();
    listChanged.resourceUpdated = (uri) => modern.notify.resourceUpdated(uri);
  }
  const allowedHosts = sdk.localhostAllowedHostnames();
  const server = http.createServer(async (req, res) => {
    try {
      const request = await toWebRequest(req, res, server.address().port);
      const rejected = sdk.hostHeaderValidationResponse(request, allowedHosts);
      let response = rejected;
      if (!response && new URL(request.url).pathname !== '/mcp') {
        response = new Response('Not Found', { status: 404 });
      }
      if (!response) {
        const toLegacy = !modern || (await sdk.isLegacyRequest(request.clone()));
        response = toLegacy ? await legacy(request) : await modern.fetch(request);
      }
      await writeWebResponse(response, res);
    } catch (error) {
      report(error);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  server.listen(port, '127.0.0.1', () => {
    process.stdout.write(`PORT ${server.address().port}\n`);
  });
  const stop = () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // A parent that holds a pipe to our stdin ends us by closing it, even if it dies before it
  // can signal; a terminal or /dev/null stdin is left alone.
  if (fstatSync(0).isFIFO()) {
    process.stdin.on('end', stop);
    process.stdin.resume();
  }
}
