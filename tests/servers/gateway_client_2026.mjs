// A 2026-07-28 client in front of `kaja serve --http`: the official TypeScript SDK 2.x client,
// pinned to 2026-07-28, whose elicitation and sampling handlers fulfil the input_required
// rounds kaja answers with (its own approvals, and what a server asks mid-call). The SDK
// retries each call with the answers itself, so every call here returns a plain result.
//
//   node gateway_client_2026.mjs URL APPROVAL CALLS
//
// APPROVAL is what the person answers kaja's approval questions: once, session or decline.
// A server's own elicitation is accepted with {"response": "Ada"}; sampling answers "Paris".
// CALLS is a JSON array of {"name", "arguments"}. Prints one JSON line per call, with its
// result (or error) and the questions the handlers were asked; exits non-zero on a failure
// to connect.

const { Client, StreamableHTTPClientTransport } = await import(
  new URL('../npm/node_modules/@modelcontextprotocol/client/dist/index.mjs', import.meta.url)
);

const [url, approval, callsJson] = process.argv.slice(2);
const timer = setTimeout(() => {
  process.stderr.write('timed out\n');
  process.exit(3);
}, 60000);

const asked = [];
const client = new Client(
  { name: 'kaja-2026-client', version: '1.0.0' },
  {
    capabilities: { elicitation: {}, sampling: {} },
    versionNegotiation: { mode: { pin: '2026-07-28' } },
  },
);
client.setRequestHandler('elicitation/create', async (request) => {
  const message = String(request.params.message ?? '');
  asked.push({ method: 'elicitation/create', message });
  // kaja's approval offers an "answer" enum; anything else is the server's own question.
  if (request.params.requestedSchema?.properties?.answer?.enum) {
    return approval === 'decline' ? { action: 'decline' } : { action: 'accept', content: { answer: approval } };
  }
  return { action: 'accept', content: { response: 'Ada' } };
});
client.setRequestHandler('sampling/createMessage', async (request) => {
  asked.push({ method: 'sampling/createMessage' });
  return { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'test', stopReason: 'endTurn' };
});

try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const version = client.getNegotiatedProtocolVersion?.() ?? null;
  for (const call of JSON.parse(callsJson)) {
    asked.length = 0;
    const line = { name: call.name, version };
    try {
      line.result = await client.callTool({ name: call.name, arguments: call.arguments ?? {} });
    } catch (error) {
      line.error = String(error?.message ?? error);
    }
    line.asked = [...asked];
    process.stdout.write(`${JSON.stringify(line)}\n`);
  }
  await client.close();
} catch (error) {
  process.stderr.write(`failed: ${error.stack ?? error}\n`);
  process.exitCode = 1;
} finally {
  clearTimeout(timer);
}
