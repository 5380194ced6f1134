// A stdio MCP server (plain JSON-RPC lines, no SDK) that asks for input through input_required
// results (multi-round-trip requests, protocol 2026-07-28), writing what it was sent to a log,
// so a test can tell which request a notifications/cancelled named:
//
//   node input_rounds_server.mjs LOG
//
// Tool "ask" {input, rounds, finish}: to a client that opened with server/discover, each of the
// first `rounds` requests of one call (the first and its retries, told apart by the
// requestState it hands out) is answered with input_required asking for `input`
// ("elicitation" or "roots"); the request after them is answered with "done" when `finish` is
// true and held unanswered otherwise. A client that opened with initialize (2025-11-25, which
// has no input_required) gets its call held at once.
//
// LOG gets one JSON line per event: {"event":"call","id":ID,"round":N} for each tools/call
// "ask", {"event":"held","id":ID} for a request it will not answer, and
// {"event":"cancelled","requestId":ID} for each notifications/cancelled.

import { appendFileSync } from 'node:fs';
import { onStdinMessages } from './stdio_lines.mjs';

const log = process.argv[2];
if (!log) {
  process.stderr.write('usage: node input_rounds_server.mjs LOG\n');
  process.exit(2);
}

const kVersion = '2026-07-28';
// Set by server/discover, cleared by initialize.
let stateless = false;
const kAskSchema = {
  type: 'object',
  properties: {
    input: { type: 'string', enum: ['elicitation', 'roots'] },
    rounds: { type: 'integer' },
    finish: { type: 'boolean' },
  },
};

function record(event) {
  appendFileSync(log, JSON.stringify(event) + '\n');
}

function send(message) {
  process.stdout.write(JSON.stringify(message) + '\n');
}

function inputRequest(kind) {
  if (kind === 'roots') return { method: 'roots/list', params: {} };
  return {
    method: 'elicitation/create',
    params: {
      message: 'What is your name?',
      requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
    },
  };
}

function ask(id, params) {
  const args = params.arguments ?? {};
  const round = typeof params.requestState === 'string' ? Number(params.requestState) : 0;
  record({ event: 'call', id, round });
  if (stateless && round < (args.rounds ?? 1)) {
    send({
      jsonrpc: '2.0',
      id,
      result: {
        resultType: 'input_required',
        inputRequests: { answer: inputRequest(args.input ?? 'elicitation') },
        requestState: String(round + 1),
      },
    });
    return;
  }
  if (stateless && args.finish) {
    send({
      jsonrpc: '2.0',
      id,
      result: { resultType: 'complete', content: [{ type: 'text', text: 'done' }] },
    });
    return;
  }
  // Only a cancellation ends it.
  record({ event: 'held', id });
}

function handle(message) {
  const { id, method, params } = message;
  if (method === 'notifications/cancelled') {
    record({ event: 'cancelled', requestId: params?.requestId ?? null });
    return;
  }
  if (id === undefined) return;
  if (method === 'initialize') {
    stateless = false;
    send({
      jsonrpc: '2.0',
      id,
      result: {
        protocolVersion: '2025-11-25',
        capabilities: { tools: {} },
        serverInfo: { name: 'input-rounds', version: '1.0.0' },
      },
    });
  } else if (method === 'server/discover') {
    stateless = true;
    send({
      jsonrpc: '2.0',
      id,
      result: {
        supportedVersions: [kVersion],
        capabilities: { tools: {} },
        serverInfo: { name: 'input-rounds', version: '1.0.0' },
      },
    });
  } else if (method === 'tools/list') {
    send({
      jsonrpc: '2.0',
      id,
      result: { tools: [{ name: 'ask', description: 'Asks for input', inputSchema: kAskSchema }] },
    });
  } else if (method === 'tools/call' && params?.name === 'ask') {
    ask(id, params);
  } else {
    send({ jsonrpc: '2.0', id, error: { code: -32601, message: `unknown method ${method}` } });
  }
}

onStdinMessages(handle);
