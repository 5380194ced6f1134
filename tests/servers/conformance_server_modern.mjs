// The 2026-07-28 half of conformance_server.mjs: tools and a prompt that ask the client for
// input through input_required results (multi-round-trip, SEP-2322), and the diagnostic tools
// the server-stateless scenario probes (capability checks, log levels, list changes).

import { randomBytes, randomUUID } from 'node:crypto';

// Returns the registrars, bound to the SDK module, zod and the text-result helper.
export function modernParts({ sdk, z, text }) {
  const { inputRequired } = sdk;

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

  function samplingRequest(prompt, maxTokens) {
    return {
      method: 'sampling/createMessage',
      params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens },
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
          inputRequests: {
            capital_question: samplingRequest('What is the capital of France?', 100),
          },
        });
      }
      return text(`Sampling said: ${reply}`);
    });
    tool('test_input_required_result_list_roots', async (_input, ctx) => {
      const roots = rootsOf(ctx, 'client_roots');
      if (roots === undefined) {
        const ask = { method: 'roots/list', params: {} };
        return inputRequired({ inputRequests: { client_roots: ask } });
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
      // What this request declares, from its _meta envelope: over stdio the SDK does not
      // fill in its older per-connection accessor for each request, as it does over HTTP.
      const caps =
        ctx.mcpReq.envelope?.['io.modelcontextprotocol/clientCapabilities'] ??
        server.server.getClientCapabilities() ??
        {};
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

  const added = { description: 'Added by a trigger' };
  const addTool = (server, i) =>
    server.registerTool(`test_added_tool_${i}`, added, async () => text('added'));
  const addPrompt = (server, i) =>
    server.registerPrompt(`test_added_prompt_${i}`, added, async () => ({
      messages: [{ role: 'user', content: { type: 'text', text: 'added' } }],
    }));

  function registerGrown(server) {
    for (let i = 1; i <= grown.tools; ++i) addTool(server, i);
    for (let i = 1; i <= grown.prompts; ++i) addPrompt(server, i);
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
          const ask = elicitRequest('What is your name?', 'name');
          return inputRequired({ inputRequests: { user_name: ask } });
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
    // Over HTTP each request has an instance of its own, so the front announces the change;
    // over stdio the one pinned instance does when something is added to it.
    const trigger = (name, kind) =>
      server.registerTool(
        name,
        { description: `Adds to the ${kind}`, inputSchema: empty },
        async () => {
          grown[kind] += 1;
          if (listChanged.notify) listChanged.notify(kind);
          else if (kind === 'tools') addTool(server, grown.tools);
          else addPrompt(server, grown.prompts);
          return text(`${kind} changed`);
        },
      );
    trigger('test_trigger_tool_change', 'tools');
    trigger('test_trigger_prompt_change', 'prompts');
  }

  return {
    stateCodec,
    listChanged,
    registerGrown,
    registerInputRequiredTools,
    registerStatelessDiagnostics,
  };
}
