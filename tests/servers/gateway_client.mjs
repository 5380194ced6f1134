// A real MCP client in front of `kaja serve`: the official TypeScript SDK (1.x) spawns kaja
// over stdio, runs the steps given on argv and prints one JSON line per step, so a C++
// test can assert on what a client of kaja's gateway sees.
//
//   node gateway_client.mjs --kaja BIN [--serve-args JSON] [--elicitation MODE]
//        [--sampling TEXT] --steps JSON
//
// MODE is what the person answers kaja's approval questions: once, session, decline, or
// none (the client then does not declare elicitation at all). A server's own elicitation
// (not kaja's) is accepted with {"name": "Tester"}. With --sampling the client declares
// sampling and answers every sampling request with TEXT.
//
// Steps (a JSON array of objects, each with "op"):
//   {"op":"list"}                                  → {"names":[...]}
//   {"op":"call","name":N,"arguments":{},"progress":true,"abortAfterMs":MS}
//                                                  → {"result":{...}} or {"error":"..."},
//                                                    with "progress":[...] and "ms"
//   {"op":"resources"}                             → {"resources":[...]}
//   {"op":"read","uri":U}                          → {"contents":[...]}
//   {"op":"prompts"}                               → {"prompts":[...]}
//   {"op":"prompt","name":N,"arguments":{}}        → {"messages":[...]}
//   {"op":"sleep","ms":MS}                         → {}
// Every line also carries "op" and "step"; requests kaja asked the client (elicitation,
// sampling) are printed as they come, as {"event":"elicitation"|"sampling",...}, and
// notifications as {"event":"notification","method":...}.


const npm = new URL("../npm/node_modules/@modelcontextprotocol/sdk/dist/esm/", import.meta.url);
const load = (path) => import(new URL(path, npm).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");
const types = await load("types.js");

function parseArgs(argv) {
  const options = { serveArgs: [], elicitation: "once", sampling: null, steps: [] };
  for (let i = 0; i < argv.length; i += 2) {
    const [key, value] = [argv[i], argv[i + 1]];
    if (key === "--kaja") options.kaja = value;
    else if (key === "--serve-args") options.serveArgs = JSON.parse(value);
    else if (key === "--elicitation") options.elicitation = value;
    else if (key === "--sampling") options.sampling = value;
    else if (key === "--steps") options.steps = JSON.parse(value);
    else throw new Error(`unknown option ${key}`);
  }
  if (!options.kaja) throw new Error("--kaja is required");
  return options;
}

const print = (line) => process.stdout.write(JSON.stringify(line) + "\n");

function describeError(error) {
  return { error: String(error?.message ?? error), code: error?.code ?? null };
}

async function runStep(client, step) {
  switch (step.op) {
    case "list": {
      const { tools } = await client.listTools();
      return { names: tools.map((tool) => tool.name), tools };
    }
    case "call": {
      const progress = [];
      const controller = new AbortController();
      const options = { timeout: step.timeoutMs ?? 15000, signal: controller.signal };
      if (step.progress) options.onprogress = (update) => progress.push(update);
      if (step.abortAfterMs !== undefined) {
        setTimeout(() => controller.abort("the test gave up"), step.abortAfterMs);
      }
      const started = Date.now();
      try {
        const result = await client.callTool(
          { name: step.name, arguments: step.arguments ?? {} },
          undefined,
          options,
        );
        return { result, progress, ms: Date.now() - started };
      } catch (error) {
        return { ...describeError(error), progress, ms: Date.now() - started };
      }
    }
    case "resources":
      return { resources: (await client.listResources()).resources };
    case "read":
      return { contents: (await client.readResource({ uri: step.uri })).contents };
    case "prompts":
      return { prompts: (await client.listPrompts()).prompts };
    case "prompt":
      return {
        messages: (await client.getPrompt({ name: step.name, arguments: step.arguments ?? {} }))
          .messages,
      };
    case "sleep":
      await new Promise((resolve) => setTimeout(resolve, step.ms));
      return {};
    default:
      throw new Error(`unknown op ${step.op}`);
  }
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const capabilities = {};
  if (options.elicitation !== "none") capabilities.elicitation = {};
  if (options.sampling !== null) capabilities.sampling = {};
  const client = new Client({ name: "kaja-gateway-test", version: "1.0.0" }, { capabilities });

  if (options.elicitation !== "none") {
    client.setRequestHandler(types.ElicitRequestSchema, async (request) => {
      const schema = request.params.requestedSchema ?? {};
      const fromKaja = schema.properties?.answer !== undefined;
      print({ event: "elicitation", fromKaja, message: request.params.message, schema });
      if (!fromKaja) return { action: "accept", content: { name: "Tester" } };
      if (options.elicitation === "decline") return { action: "decline" };
      return { action: "accept", content: { answer: options.elicitation } };
    });
  }
  if (options.sampling !== null) {
    client.setRequestHandler(types.CreateMessageRequestSchema, async (request) => {
      print({ event: "sampling", messages: request.params.messages });
      return {
        role: "assistant",
        model: "kaja-test-model",
        content: { type: "text", text: options.sampling },
      };
    });
  }
  client.fallbackNotificationHandler = async (notification) => {
    print({ event: "notification", method: notification.method });
  };
  client.setNotificationHandler(types.ToolListChangedNotificationSchema, async () => {
    print({ event: "notification", method: "notifications/tools/list_changed" });
  });

  const transport = new StdioClientTransport({
    command: options.kaja,
    args: ["serve", ...options.serveArgs],
    env: { ...process.env },
    stderr: "inherit",
  });
  await client.connect(transport);
  print({ event: "connected", server: client.getServerVersion(),
          capabilities: client.getServerCapabilities() });
  for (const [index, step] of options.steps.entries()) {
    let line;
    try {
      line = await runStep(client, step);
    } catch (error) {
      line = describeError(error);
    }
    print({ op: step.op, step: index, ...line });
  }
  await client.close();
}

main().then(
  () => process.exit(0),
  (error) => {
    print({ event: "fatal", ...describeError(error) });
    process.exit(1);
  },
);
