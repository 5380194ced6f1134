// A small MCP server on @modelcontextprotocol/server 2.x that speaks protocol revision
// 2026-07-28 (stateless: server/discover, version and capabilities in each request's _meta)
// and still serves 2025-era clients that open with initialize.
//
//   node stateless_server.mjs stdio   serves one connection on stdin/stdout (serveStdio)
//   node stateless_server.mjs http    serves POST / on 127.0.0.1, an ephemeral port, and
//                                     prints "PORT <n>" on stdout once it listens
//   node stateless_server.mjs http-drop-listen
//                                     the same, but prints "LISTEN" for each
//                                     subscriptions/listen and "TOOLS-LIST" for each
//                                     tools/list; 300 ms after the first listen stream opens
//                                     it adds "extra" without announcing it and drops that
//                                     stream (a restart or a network blip, to the client)
//
// Tools: echo {message} -> text; add {a, b} -> text and structuredContent {sum};
// image -> a 1x1 PNG; slow {steps, delayMs} -> progress notifications, then "done";
// grow -> adds the tool "extra" and announces it (notifications/tools/list_changed, which at
// 2026-07-28 reaches only clients with a subscriptions/listen stream open).

import { fstatSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import http from 'node:http';

// The packages live in tests/npm/node_modules, which ESM resolution from this folder does not
// search, so each is imported through its package.json "exports" entry for `import`.
async function importTestPackage(name, subpath = '.') {
  const root = new URL(`../npm/node_modules/${name}/`, import.meta.url);
  const manifest = JSON.parse(await readFile(new URL('package.json', root), 'utf8'));
  const entry = manifest.exports[subpath];
  const target = typeof entry === 'string' ? entry : (entry.import?.default ?? entry.import);
  return import(new URL(target, root));
}

const { createMcpHandler, hostHeaderValidationResponse, localhostAllowedHostnames, McpServer } =
  await importTestPackage('@modelcontextprotocol/server');
const { serveStdio } = await importTestPackage('@modelcontextprotocol/server', './stdio');
const z = await importTestPackage('zod', './v4');

// A 1x1 opaque red PNG.
const kPixelPng =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

// Set once "grow" was called: every instance made afterwards offers "extra" too.
let grown = false;
// The HTTP handler, whose notifier reaches every open listen stream.
let httpHandler;

function registerExtra(server) {
  server.registerTool('extra', { description: 'Appears after grow' }, async () => ({
    content: [{ type: 'text', text: 'extra' }],
  }));
}

function makeServer() {
  const server = new McpServer({ name: 'kaja-stateless-test', version: '1.0.0' });
  if (grown) registerExtra(server);
  server.registerTool('grow', { description: 'Adds the tool "extra"' }, async () => {
    if (!grown) {
      grown = true;
      // Over HTTP each request has an instance of its own, so the handler announces the
      // change; over stdio the one pinned instance does when a tool is added to it.
      if (httpHandler) httpHandler.notify.toolsChanged();
      else registerExtra(server);
    }
    return { content: [{ type: 'text', text: 'grown' }] };
  });
  server.registerTool(
    'echo',
    { description: 'Returns its message', inputSchema: z.object({ message: z.string() }) },
    async ({ message }) => ({ content: [{ type: 'text', text: message }] }),
  );
  server.registerTool(
    'add',
    {
      description: 'Adds two numbers',
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      outputSchema: z.object({ sum: z.number() }),
    },
    async ({ a, b }) => ({
      content: [{ type: 'text', text: String(a + b) }],
      structuredContent: { sum: a + b },
    }),
  );
  server.registerTool('image', { description: 'Returns a 1x1 PNG' }, async () => ({
    content: [{ type: 'image', data: kPixelPng, mimeType: 'image/png' }],
  }));
  server.registerTool(
    'slow',
    {
      description: 'Reports progress for each step, then returns "done"',
      inputSchema: z.object({
        steps: z.number().int().min(1).max(20),
        delayMs: z.number().int().min(0).max(1000),
      }),
    },
    async ({ steps, delayMs }, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      for (let step = 1; step <= steps; ++step) {
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        if (token !== undefined) {
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken: token, progress: step, total: steps },
          });
        }
      }
      return { content: [{ type: 'text', text: 'done' }] };
    },
  );
  return server;
}

function serveOnStdio() {
  serveStdio(makeServer, { onerror: (error) => process.stderr.write(`${error.message}\n`) });
}

// Node's http module speaks IncomingMessage/ServerResponse; the SDK's handler speaks the web
// Request/Response, so each exchange is converted both ways here (no extra package needed).
async function toWebRequest(req, port) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) value.forEach((item) => headers.append(name, item));
    else if (value !== undefined) headers.set(name, value);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && chunks.length > 0;
  return new Request(`http://127.0.0.1:${port}${req.url}`, {
    method: req.method,
    headers,
    body: hasBody ? Buffer.concat(chunks) : undefined,
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

// In http-drop-listen mode: notes the listen and tools/list requests and drops the first
// listen stream once it is open.
let listens = 0;
async function watchRequest(request, res) {
  const body = await request
    .clone()
    .json()
    .catch(() => null);
  const method = body?.method;
  if (method === 'tools/list') process.stdout.write('TOOLS-LIST\n');
  if (method !== 'subscriptions/listen') return;
  process.stdout.write('LISTEN\n');
  if (++listens !== 1) return;
  setTimeout(() => {
    grown = true;
    res.destroy();
  }, 300);
}

function serveOnHttp(dropListen) {
  const handler = createMcpHandler(makeServer, {
    onerror: (error) => process.stderr.write(`${error.message}\n`),
  });
  httpHandler = handler;
  const server = http.createServer(async (req, res) => {
    try {
      const request = await toWebRequest(req, server.address().port);
      if (dropListen && req.method === 'POST') await watchRequest(request, res);
      const rejected = hostHeaderValidationResponse(request, localhostAllowedHostnames());
      await writeWebResponse(rejected ?? (await handler.fetch(request)), res);
    } catch (error) {
      process.stderr.write(`request failed: ${error.message}\n`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`PORT ${server.address().port}\n`);
  });
  const stop = () => {
    handler.close().finally(() => server.close(() => process.exit(0)));
    server.closeAllConnections();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // A parent that holds a pipe to our stdin ends us by closing it, even if it dies before
  // it can signal; a terminal or /dev/null stdin is left alone.
  if (fstatSync(0).isFIFO()) {
    process.stdin.on('end', stop);
    process.stdin.resume();
  }
}

const mode = process.argv[2] ?? 'stdio';
if (mode === 'stdio') {
  serveOnStdio();
} else if (mode === 'http' || mode === 'http-drop-listen') {
  serveOnHttp(mode === 'http-drop-listen');
} else {
  process.stderr.write(`usage: stateless_server.mjs stdio|http|http-drop-listen (got "${mode}")\n`);
  process.exit(2);
}
