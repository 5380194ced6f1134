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

import { randomBytes, randomUUID } from "node:crypto";
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
const { McpServer, ResourceTemplate, inputRequired } = sdk;
const { serveStdio, StdioServerTransport } = await importTestPackage(
  '@modelcontextprotocol/server',
  './stdio',
);
const z = await importTestPackage('zod', './v4');

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

// requestState is echoed by the client, so it is sealed with an HMAC under a per-process key;
// the SDK's seam verifies it before a handler runs and answers state that fails with -32602
// (the suite tampers with it on purpose).
const stateCodec = sdk.createRequestStateCodec({ key: randomBytes(32) });
const sealState = (payload) => stateCodec.mint(payload);
const stateOf = (ctx) => ctx.mcpReq.requestState();

function elicitRequest(message, field, type = 'string') {
  return {
    method: 'elicitation/create',
    params: {
      message,
      requestedSchema: { type: 'object', properties: { [field]: { type } }, required: [field] },
    },
  };
}

function samplingRequest(text, maxTokens) {
  return {
    method: 'sampling/createMessage',
    params: { messages: [{ role: 'user', content: { type: 'text', text } }], maxTokens },
  };
}

// The accepted content of an elicitation response, or undefined.
function accepted(ctx, key) {
  const response = ctx.mcpReq.inputResponses?.[key];
  if (!response || typeof response !== 'object' || response.action !== 'accept') return undefined;
  return response.content && typeof response.content === 'object' ? response.content : undefined;
}

function samplingText(ctx, key) {
  const response = ctx.mcpReq.inputResponses?.[key];
  const content = response?.content;
  if (Array.isArray(content)) return content.find((c) => c?.type === 'text')?.text;
  return content?.type === 'text' ? content.text : undefined;
}

function rootsOf(ctx, key) {
  const roots = ctx.mcpReq.inputResponses?.[key]?.roots;
  return Array.isArray(roots) ? roots : undefined;
}

const text = (value) => ({ content: [{ type: 'text', text: value }] });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Resources a client subscribed to (per process: the suite subscribes and unsubscribes on one
// connection).
const subscriptions = new Set();

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
    { description: 'Takes a contact with a phone or an email', inputSchema: sdk.fromJsonSchema(kContactSchema) },
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

function registerNotifyingTools(server) {
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

// 2025-era tools that ask the client mid-call (server-to-client requests), and one that cuts
// its own SSE stream so that the client must resume it.
function registerAskingTools(server) {
  server.registerTool(
    'test_reconnection',
    { description: 'Closes its response stream mid-call; the result comes after the client resumes', inputSchema: z.object({}) },
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
      const result = await ctx.mcpReq.requestSampling({
        messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
        maxTokens: 100,
      });
      const content = Array.isArray(result.content) ? result.content[0] : result.content;
      return text(`LLM response: ${content?.text ?? 'No response'}`);
    },
  );
  const elicitTool = (name, description, params, prefix) =>
    server.registerTool(name, { description, inputSchema: z.object({}).passthrough() }, async (input, ctx) => {
      const result = await ctx.mcpReq.elicitInput(params(input));
      return text(`${prefix}: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`);
    });
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

// 2026-07-28 tools that ask through input_required results (multi-round-trip).
function registerInputRequiredTools(server) {
  const tool = (name, handler) =>
    server.registerTool(
      name,
      { description: `input_required flow: ${name}`, inputSchema: z.object({}).passthrough() },
      handler,
    );

  tool('test_input_required_result_elicitation', async (_input, ctx) => {
    const answer = accepted(ctx, 'user_name');
    if (typeof answer?.name !== 'string') {
      return inputRequired({
        inputRequests: { user_name: elicitRequest('What is your name?', 'name') },
      });
    }
    return text(`Hello, ${answer.name}!`);
  });
  tool('test_input_required_result_sampling', async (_input, ctx) => {
    const reply = samplingText(ctx, 'capital_question');
    if (reply === undefined) {
      return inputRequired({
        inputRequests: { capital_question: samplingRequest('What is the capital of France?', 100) },
      });
    }
    return text(`Sampling said: ${reply}`);
  });
  tool('test_input_required_result_list_roots', async (_input, ctx) => {
    const roots = rootsOf(ctx, 'client_roots');
    if (roots === undefined) {
      return inputRequired({ inputRequests: { client_roots: { method: 'roots/list', params: {} } } });
    }
    return text(`Roots: ${roots.map((root) => root.uri).join(', ')}`);
  });
  tool('test_input_required_result_request_state', async (_input, ctx) => {
    const state = stateOf(ctx);
    if (state?.step !== 'confirm' || accepted(ctx, 'confirm') === undefined) {
      return inputRequired({
        inputRequests: { confirm: elicitRequest('Please confirm', 'ok', 'boolean') },
        requestState: await sealState({ step: 'confirm', nonce: randomUUID() }),
      });
    }
    return text('state-ok: confirmed');
  });
  tool('test_input_required_result_multiple_inputs', async (_input, ctx) => {
    const state = stateOf(ctx);
    const name = accepted(ctx, 'user_name')?.name;
    const greeting = samplingText(ctx, 'greeting');
    const roots = rootsOf(ctx, 'client_roots');
    if (state?.step !== 'all' || name === undefined || greeting === undefined || !roots) {
      return inputRequired({
        inputRequests: {
          user_name: elicitRequest('What is your name?', 'name'),
          greeting: samplingRequest('Generate a greeting', 50),
          client_roots: { method: 'roots/list', params: {} },
        },
        requestState: await sealState({ step: 'all', nonce: randomUUID() }),
      });
    }
    return text(`${greeting} ${name}, with ${roots.length} root(s)`);
  });
  tool('test_input_required_result_multi_round', async (_input, ctx) => {
    const state = stateOf(ctx);
    if (state?.round === 1 && accepted(ctx, 'step1') !== undefined) {
      return inputRequired({
        inputRequests: { step2: elicitRequest('Step 2: What is your favorite color?', 'color') },
        requestState: await sealState({ round: 2, name: accepted(ctx, 'step1').name }),
      });
    }
    if (state?.round === 2 && accepted(ctx, 'step2') !== undefined) {
      return text(`${state.name} likes ${accepted(ctx, 'step2').color}`);
    }
    return inputRequired({
      inputRequests: { step1: elicitRequest('Step 1: What is your name?', 'name') },
      requestState: await sealState({ round: 1 }),
    });
  });
  tool('test_input_required_result_tampered_state', async (_input, ctx) => {
    const state = stateOf(ctx);
    if (state?.step !== 'sealed' || accepted(ctx, 'confirm') === undefined) {
      return inputRequired({
        inputRequests: { confirm: elicitRequest('Please confirm', 'ok', 'boolean') },
        requestState: await sealState({ step: 'sealed', nonce: randomUUID() }),
      });
    }
    return text('state-ok: untampered');
  });
  tool('test_input_required_result_capabilities', async (_input, ctx) => {
    const caps = server.server.getClientCapabilities() ?? {};
    const done = Object.keys(ctx.mcpReq.inputResponses ?? {}).length > 0;
    const requests = {};
    if (caps.elicitation) requests.user_name = elicitRequest('What is your name?', 'name');
    if (caps.sampling) requests.greeting = samplingRequest('Generate a greeting', 50);
    if (caps.roots) requests.client_roots = { method: 'roots/list', params: {} };
    if (done || Object.keys(requests).length === 0) return text('capabilities respected');
    return inputRequired({ inputRequests: requests });
  });
  server.registerPrompt(
    'test_input_required_result_prompt',
    { description: 'A prompt that asks for context first' },
    async (ctx) => {
      const context = accepted(ctx, 'user_context')?.context;
      if (typeof context !== 'string') {
        return inputRequired({
          inputRequests: {
            user_context: elicitRequest('What context should the prompt use?', 'context'),
          },
        });
      }
      return {
        messages: [{ role: 'user', content: { type: 'text', text: `Context: ${context}` } }],
      };
    },
  );
}

// Tools and prompts the trigger tools add; every instance made afterwards offers them. The
// HTTP front sets `listChanged.notify` so that open subscriptions/listen streams hear of it.
const grown = { tools: 0, prompts: 0 };
const listChanged = { notify: undefined };

function registerGrown(server) {
  for (let i = 1; i <= grown.tools; ++i) {
    server.registerTool(`test_added_tool_${i}`, { description: 'Added by a trigger' }, async () =>
      text('added'),
    );
  }
  for (let i = 1; i <= grown.prompts; ++i) {
    server.registerPrompt(`test_added_prompt_${i}`, { description: 'Added by a trigger' }, async () => ({
      messages: [{ role: 'user', content: { type: 'text', text: 'added' } }],
    }));
  }
}

// 2026-07-28 diagnostic tools the server-stateless scenario probes.
function registerStatelessDiagnostics(server) {
  const empty = z.object({}).passthrough();
  server.registerTool(
    'test_missing_capability',
    { description: 'Needs the sampling capability', inputSchema: empty },
    async (_input, ctx) => {
      // The SDK answers an input request the client cannot serve with -32021 (HTTP 400).
      const reply = samplingText(ctx, 'question');
      if (reply === undefined) {
        return inputRequired({ inputRequests: { question: samplingRequest('Say hello', 20) } });
      }
      return text(reply);
    },
  );
  server.registerTool(
    'test_streaming_elicitation',
    { description: 'Reports progress, then asks the user', inputSchema: empty },
    async (_input, ctx) => {
      const progressToken = ctx.mcpReq._meta?.progressToken;
      if (progressToken !== undefined) {
        await ctx.mcpReq.notify({
          method: 'notifications/progress',
          params: { progressToken, progress: 1, total: 2 },
        });
      }
      if (accepted(ctx, 'user_name') === undefined) {
        return inputRequired({ inputRequests: { user_name: elicitRequest('What is your name?', 'name') } });
      }
      return text('streamed');
    },
  );
  server.registerTool(
    'test_logging_tool',
    { description: 'Logs at info (only when the request asks for logs)', inputSchema: empty },
    async (_input, ctx) => {
      await ctx.mcpReq.log('info', 'test_logging_tool ran');
      return text('logged');
    },
  );
  const trigger = (name, kind) =>
    server.registerTool(name, { description: `Adds one ${kind.slice(0, -1)}`, inputSchema: empty }, async () => {
      grown[kind] += 1;
      if (listChanged.notify) listChanged.notify(kind);
      else if (kind === 'tools') server.registerTool(`test_added_tool_${grown.tools}`, { description: 'Added by a trigger' }, async () => text('added'));
      else server.registerPrompt(`test_added_prompt_${grown.prompts}`, { description: 'Added by a trigger' }, async () => ({ messages: [{ role: 'user', content: { type: 'text', text: 'added' } }] }));
      return text(`${kind} changed`);
    });
  trigger('test_trigger_tool_change', 'tools');
  trigger('test_trigger_prompt_change', 'prompts');
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
    async () => ({ contents: [{ uri: 'test://static-binary', mimeType: 'image/png', blob: kPng }] }),
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
          text: JSON.stringify({ id: variables.id, templateTest: true, data: `Data for ID: ${variables.id}` }),
        },
      ],
    }),
  );
  server.registerResource(
    'watched-resource',
    'test://watched-resource',
    { description: 'A resource clients may subscribe to', mimeType: 'text/plain' },
    async () => ({
      contents: [{ uri: 'test://watched-resource', mimeType: 'text/plain', text: 'Watched resource content' }],
    }),
  );
}

function registerPrompts(server) {
  const user = (content) => ({ role: 'user', content });
  server.registerPrompt('test_simple_prompt', { description: 'A prompt without arguments' }, async () => ({
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
      messages: [user({ type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` })],
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
          resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
        }),
        user({ type: 'text', text: 'Please process the embedded resource above.' }),
      ],
    }),
  );
  server.registerPrompt('test_prompt_with_image', { description: 'A prompt with an image' }, async () => ({
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
    return {};
  });
  low.setRequestHandler('resources/unsubscribe', async (request) => {
    subscriptions.delete(request.params.uri);
    return {};
  });
  low.setRequestHandler('logging/setLevel', async () => ({}));
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
      requestState: { verify: stateCodec.verify },
      ...(legacyOnly ? { supportedProtocolVersions: kLegacyVersions } : {}),
    },
  );
  registerContentTools(server);
  registerNotifyingTools(server);
  if (era === 'legacy') registerAskingTools(server);
  if (era === 'modern') {
    registerInputRequiredTools(server);
    registerStatelessDiagnostics(server);
  }
  registerGrown(server);
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
  serveOnHttp({ sdk, makeServer, legacyOnly, port, report, listChanged });
} else {
  process.stderr.write(`usage: conformance_server.mjs stdio|http [--legacy-only] [--port N] (got "${mode}")\n`);
  process.exit(2);
}
