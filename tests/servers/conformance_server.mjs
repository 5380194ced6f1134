// The reference server for the official MCP conformance suite's server scenarios, built on
// @modelcontextprotocol/server 2.x. It offers what the scenarios ask for by name (the tools
// test_simple_text, test_image_content, ..., the resources test://static-text, ..., the
// prompts test_simple_prompt, ..., logging, completion, subscriptions, and the 2026-07-28
// input_required flows) so that the same scenarios can be run against it directly and through
// kaja's gateway.
//
//   node conformance_server.mjs stdio [--legacy-only]
//       serves one connection on stdin/stdout; both protocol eras unless --legacy-only
//   node conformance_server.mjs http [--legacy-only] [--port N]
//       serves /mcp on 127.0.0.1 (port N, or an ephemeral one) and prints "PORT <n>" once it
//       listens; 2025-era traffic gets sessions (Mcp-Session-Id), 2026-07-28 traffic is
//       stateless; --legacy-only turns 2026-07-28 traffic away
//
// --legacy-only makes a server that speaks only 2025-11-25 and older: at 2026-07-28 a
// client's server/discover and per-request _meta are refused, as by any 2025 server.

import { readFile } from 'node:fs/promises';

// The packages live in tests/npm/node_modules, which ESM resolution from this folder does not
// search, so each is imported through its package.json "exports" entry for `import`.
async function importTestPackage(name, subpath = '.') {
  const root = new URL(`../npm/node_modules/${name}/`, import.meta.url);
  const manifest = JSON.parse(await readFile(new URL('package.json', root), 'utf8'));
  const entry = manifest.exports[subpath];
  const target = typeof entry === 'string' ? entry : (entry.import?.default ?? entry.import);
  return import(new URL(target, root));
}

const sdk = await importTestPackage('@modelcontextprotocol/server');
const { McpServer, ResourceTemplate } = sdk;
const { serveStdio, StdioServerTransport } = await importTestPackage(
  '@modelcontextprotocol/server',
  './stdio',
);
const z = await importTestPackage('zod', './v4');
const { modernParts } = await import('./conformance_server_modern.mjs');

const args = process.argv.slice(2);
const mode = args[0] ?? 'stdio';
const legacyOnly = args.includes('--legacy-only');
const portFlag = args.indexOf('--port');
const port = portFlag >= 0 ? Number(args[portFlag + 1]) : 0;

// The versions a 2025-era server negotiates in initialize.
const kLegacyVersions = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

// A 1x1 opaque red PNG and a tiny silent WAV.
const kPng =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const kWav = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=';

const text = (value) => ({ content: [{ type: 'text', text: value }] });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const modern = modernParts({ sdk, z, text });

// Resources a client subscribed to (per process: the suite subscribes and unsubscribes on one
// connection).
const subscriptions = new Set();
// The log level 2025-11-25 clients of this process set last (logging/setLevel), "" before any.
let legacyLogLevel = '';

const kContactSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: {
      $anchor: 'addressDef',
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    },
  },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
};

function registerContentTools(server) {
  server.registerTool('test_simple_text', { description: 'Returns one text block' }, async () =>
    text('This is a simple text response for testing.'),
  );
  server.registerTool('test_image_content', { description: 'Returns a PNG image' }, async () => ({
    content: [{ type: 'image', data: kPng, mimeType: 'image/png' }],
  }));
  server.registerTool('test_audio_content', { description: 'Returns a WAV clip' }, async () => ({
    content: [{ type: 'audio', data: kWav, mimeType: 'audio/wav' }],
  }));
  server.registerTool(
    'test_embedded_resource',
    { description: 'Returns an embedded text resource' },
    async () => ({
      content: [
        {
          type: 'resource',
          resource: {
            uri: 'test://embedded-resource',
            mimeType: 'text/plain',
            text: 'This is an embedded resource content.',
          },
        },
      ],
    }),
  );
  server.registerTool(
    'test_multiple_content_types',
    { description: 'Returns text, an image and a resource' },
    async () => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: kPng, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: JSON.stringify({ test: 'data', value: 123 }),
          },
        },
      ],
    }),
  );
  server.registerTool('test_error_handling', { description: 'Always fails' }, async () => ({
    isError: true,
    content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
  }));
  // Listed with its JSON Schema 2020-12 keywords intact ($defs, $anchor, allOf/anyOf,
  // if/then/else, additionalProperties), as the json-schema-2020-12 scenario asks.
  server.registerTool(
    'json_schema_2020_12_tool',
    {
      description: 'Takes a contact with a phone or an email',
      inputSchema: sdk.fromJsonSchema(kContactSchema),
    },
    async (input) => text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(input)}`),
  );
  // A parameter mirrored into the Mcp-Param-Region header (x-mcp-header), which a 2026-07-28
  // server checks against the body.
  server.registerTool(
    'test_headers',
    {
      description: 'Echoes a region that also travels as the Mcp-Param-Region header',
      inputSchema: sdk.fromJsonSchema({
        type: 'object',
        properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
        required: ['region'],
      }),
    },
    async ({ region }) => text(`region: ${region}`),
  );
}

function registerNotifyingTools(server, era) {
  // What 2025-11-25 clients of this process subscribed to (resources/subscribe), sorted.
  server.registerTool(
    'test_subscriptions',
    { description: 'Lists the resources subscribed to', inputSchema: z.object({}) },
    async () => text(JSON.stringify([...subscriptions].sort())),
  );
  server.registerTool(
    'test_log_level',
    { description: 'Tells the log level set last', inputSchema: z.object({}) },
    async () => text(legacyLogLevel),
  );
  // Tells of a change to a resource, as a server whose data moved would: at 2025-11-25 to a
  // client that subscribed to it, at 2026-07-28 to listen streams whose filter names it.
  server.registerTool(
    'test_touch_resource',
    { description: 'Announces that a resource changed', inputSchema: z.object({ uri: z.string() }) },
    async ({ uri }) => {
      // Over HTTP each 2026-07-28 request has an instance of its own: the front tells the
      // listen streams.
      if (era === 'modern' && modern.listChanged.resourceUpdated) {
        modern.listChanged.resourceUpdated(uri);
      } else if (era === 'modern' || subscriptions.has(uri)) {
        await server.server.sendResourceUpdated({ uri });
      }
      return text(`touched ${uri}`);
    },
  );
  server.registerTool(
    'test_tool_with_logging',
    { description: 'Logs three messages while it runs', inputSchema: z.object({}) },
    async (_input, ctx) => {
      for (const message of ['Tool execution started', 'Tool processing data']) {
        await ctx.mcpReq.log('info', message);
        await sleep(50);
      }
      await ctx.mcpReq.log('info', 'Tool execution completed');
      return text('Tool with logging executed successfully');
    },
  );
  server.registerTool(
    'test_tool_with_progress',
    { description: 'Reports progress 0, 50, 100', inputSchema: z.object({}) },
    async (_input, ctx) => {
      const progressToken = ctx.mcpReq._meta?.progressToken ?? 0;
      for (const progress of [0, 50, 100]) {
        await ctx.mcpReq.notify({
          method: 'notifications/progress',
          params: { progressToken, progress, total: 100, message: `Completed ${progress} of 100` },
        });
        if (progress < 100) await sleep(50);
      }
      return text(String(progressToken));
    },
  );
}

// The tools that ask the client something mid-call. At 2025-11-25 they send it a request of
// their own; at 2026-07-28 they answer input_required and read the answer from the retry, as
// a server that speaks both eras offers the same tools in both.
function registerAskingTools(server, era) {
  const ask = async (ctx, request) => {
    if (era === 'modern') return ctx.mcpReq.inputResponses?.answer;
    return request.method === 'sampling/createMessage'
      ? ctx.mcpReq.requestSampling(request.params)
      : ctx.mcpReq.elicitInput(request.params);
  };
  const stillAsking = (request) => sdk.inputRequired({ inputRequests: { answer: request } });
  server.registerTool(
    'test_reconnection',
    {
      description: 'Closes its response stream mid-call; the result comes after the client resumes',
      inputSchema: z.object({}),
    },
    async (_input, ctx) => {
      ctx.http?.closeSSE?.();
      await sleep(100);
      return text('Reconnection test completed: the client resumed the stream.');
    },
  );
  server.registerTool(
    'test_sampling',
    { description: 'Asks the client to sample', inputSchema: z.object({ prompt: z.string() }) },
    async ({ prompt }, ctx) => {
      const request = {
        method: 'sampling/createMessage',
        params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 },
      };
      const result = await ask(ctx, request);
      if (result === undefined) return stillAsking(request);
      const content = Array.isArray(result.content) ? result.content[0] : result.content;
      return text(`LLM response: ${content?.text ?? 'No response'}`);
    },
  );
  const elicitTool = (name, description, params, prefix) =>
    server.registerTool(
      name,
      { description, inputSchema: z.object({}).passthrough() },
      async (input, ctx) => {
        const request = { method: 'elicitation/create', params: params(input) };
        const result = await ask(ctx, request);
        if (result === undefined) return stillAsking(request);
        const content = JSON.stringify(result.content ?? {});
        return text(`${prefix}: action=${result.action}, content=${content}`);
      },
    );
  elicitTool(
    'test_elicitation',
    'Asks the user for a response',
    (input) => ({
      message: String(input.message ?? 'Please respond'),
      requestedSchema: {
        type: 'object',
        properties: { response: { type: 'string', description: "User's response" } },
        required: ['response'],
      },
    }),
    'User response',
  );
  elicitTool(
    'test_elicitation_sep1034_defaults',
    'Asks with a form whose fields have defaults',
    () => ({
      message: 'Please review and update the form fields with defaults',
      requestedSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'User name', default: 'John Doe' },
          age: { type: 'integer', description: 'User age', default: 30 },
          score: { type: 'number', description: 'User score', default: 95.5 },
          status: {
            type: 'string',
            description: 'User status',
            enum: ['active', 'inactive', 'pending'],
            default: 'active',
          },
          verified: { type: 'boolean', description: 'Verification status', default: true },
        },
        required: [],
      },
    }),
    'Elicitation completed',
  );
  const titled = (prefix, names) =>
    names.map((title, i) => ({ const: `value${i + 1}`, title: `${title} ${prefix}` }));
  elicitTool(
    'test_elicitation_sep1330_enums',
    'Asks with every enum form',
    () => ({
      message: 'Please select options from the enum fields',
      requestedSchema: {
        type: 'object',
        properties: {
          untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
          titledSingle: { type: 'string', oneOf: titled('Option', ['First', 'Second', 'Third']) },
          legacyEnum: {
            type: 'string',
            enum: ['opt1', 'opt2', 'opt3'],
            enumNames: ['Option One', 'Option Two', 'Option Three'],
          },
          untitledMulti: {
            type: 'array',
            minItems: 1,
            maxItems: 3,
            items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
          },
          titledMulti: {
            type: 'array',
            minItems: 1,
            maxItems: 3,
            items: { anyOf: titled('Choice', ['First', 'Second', 'Third']) },
          },
        },
        required: [],
      },
    }),
    'Elicitation completed',
  );
}

function registerResources(server) {
  server.registerResource(
    'static-text',
    'test://static-text',
    { description: 'A static text resource', mimeType: 'text/plain' },
    async () => ({
      contents: [
        {
          uri: 'test://static-text',
          mimeType: 'text/plain',
          text: 'This is the content of the static text resource.',
        },
      ],
    }),
  );
  server.registerResource(
    'static-binary',
    'test://static-binary',
    { description: 'A static PNG', mimeType: 'image/png' },
    async () => ({
      contents: [{ uri: 'test://static-binary', mimeType: 'image/png', blob: kPng }],
    }),
  );
  server.registerResource(
    'template',
    new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    { description: 'Data for an id', mimeType: 'application/json' },
    async (uri, variables) => ({
      contents: [
        {
          uri: uri.toString(),
          mimeType: 'application/json',
          text: JSON.stringify({
            id: variables.id,
            templateTest: true,
            data: `Data for ID: ${variables.id}`,
          }),
        },
      ],
    }),
  );
  server.registerResource(
    'watched-resource',
    'test://watched-resource',
    { description: 'A resource clients may subscribe to', mimeType: 'text/plain' },
    async () => ({
      contents: [
        {
          uri: 'test://watched-resource',
          mimeType: 'text/plain',
          text: 'Watched resource content',
        },
      ],
    }),
  );
}

function registerPrompts(server) {
  const user = (content) => ({ role: 'user', content });
  const simple = { description: 'A prompt without arguments' };
  server.registerPrompt('test_simple_prompt', simple, async () => ({
    messages: [user({ type: 'text', text: 'This is a simple prompt for testing.' })],
  }));
  server.registerPrompt(
    'test_prompt_with_arguments',
    {
      description: 'A prompt with two required arguments',
      argsSchema: z.object({
        arg1: z.string().describe('First test argument'),
        arg2: z.string().describe('Second test argument'),
      }),
    },
    async ({ arg1, arg2 }) => ({
      messages: [
        user({ type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` }),
      ],
    }),
  );
  server.registerPrompt(
    'test_prompt_with_embedded_resource',
    {
      description: 'A prompt that embeds a resource',
      argsSchema: z.object({ resourceUri: z.string().describe('URI of the resource to embed') }),
    },
    async ({ resourceUri }) => ({
      messages: [
        user({
          type: 'resource',
          resource: {
            uri: resourceUri,
            mimeType: 'text/plain',
            text: 'Embedded resource content for testing.',
          },
        }),
        user({ type: 'text', text: 'Please process the embedded resource above.' }),
      ],
    }),
  );
  const image = { description: 'A prompt with an image' };
  server.registerPrompt('test_prompt_with_image', image, async () => ({
    messages: [
      user({ type: 'image', data: kPng, mimeType: 'image/png' }),
      user({ type: 'text', text: 'Please analyze the image above.' }),
    ],
  }));
}

function registerProtocolHandlers(server) {
  const low = server.server;
  low.setRequestHandler('resources/subscribe', async (request) => {
    subscriptions.add(request.params.uri);
    // For kaja's tests: a URI starting test://slow is taken at once but answered after 2 s,
    // which holds the subscribe (or the unsubscribe below) in flight; a cancel does not
    // undo it.
    if (String(request.params.uri).startsWith('test://slow')) {
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
    return {};
  });
  low.setRequestHandler('resources/unsubscribe', async (request) => {
    subscriptions.delete(request.params.uri);
    if (String(request.params.uri).startsWith('test://slow')) {
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
    return {};
  });
  low.setRequestHandler('logging/setLevel', async (request) => {
    legacyLogLevel = String(request.params.level);
    return {};
  });
  low.setRequestHandler('completion/complete', async () => ({
    completion: { values: [], total: 0, hasMore: false },
  }));
}

function makeServer({ era } = { era: 'legacy' }) {
  const hint = { ttlMs: 300000, cacheScope: 'public' };
  const server = new McpServer(
    { name: 'kaja-conformance-reference', version: '1.0.0' },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        logging: {},
        completions: {},
      },
      cacheHints: {
        'tools/list': hint,
        'prompts/list': hint,
        'resources/list': hint,
        'resources/templates/list': hint,
        'resources/read': { ttlMs: 300000, cacheScope: 'private' },
        'server/discover': hint,
      },
      requestState: { verify: modern.stateCodec.verify },
      ...(legacyOnly ? { supportedProtocolVersions: kLegacyVersions } : {}),
    },
  );
  registerContentTools(server);
  registerNotifyingTools(server, era);
  registerAskingTools(server, era);
  if (era === 'modern') {
    modern.registerInputRequiredTools(server);
    modern.registerStatelessDiagnostics(server);
  }
  modern.registerGrown(server);
  registerResources(server);
  registerPrompts(server);
  registerProtocolHandlers(server);
  return server;
}

const report = (error) => process.stderr.write(`${error?.message ?? error}\n`);

function serveOnStdio() {
  if (legacyOnly) {
    makeServer({ era: 'legacy' }).connect(new StdioServerTransport()).catch(report);
  } else {
    serveStdio(makeServer, { onerror: report });
  }
}

if (mode === 'stdio') {
  serveOnStdio();
} else if (mode === 'http') {
  const { serveOnHttp } = await import('./conformance_server_http.mjs');
  serveOnHttp({ sdk, makeServer, legacyOnly, port, report, listChanged: modern.listChanged });
} else {
  const usage = 'usage: conformance_server.mjs stdio|http [--legacy-only] [--port N]';
  process.stderr.write(`${usage} (got "${mode}")\n`);
  process.exit(2);
}
