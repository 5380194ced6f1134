// A protected MCP server and its own OAuth 2.1 authorization server, on 127.0.0.1, for the
// sign-in tests (kaja login, doctor's classification, tokens used and refreshed).
//
//   node oauth_server.mjs [--token-ttl SECONDS] [--key-only] [--authorization-server URL]
//
// Prints "PORT <n>" once it listens, then one line per event the tests count:
//   REGISTER <client_id>            a dynamic registration
//   AUTHORIZE <scope>               an authorization request that passed its checks
//   TOKEN code|refresh <n>          an access token issued (n counts them)
//   MCP <method> <ok|401>           a request to /mcp
// Endpoints: /mcp (Streamable HTTP, JSON answers; tools whoami and echo), the protected
// resource metadata at /.well-known/oauth-protected-resource/mcp, the authorization server
// metadata at /.well-known/oauth-authorization-server, /register, /authorize, /token.
// --key-only: /mcp answers 401 with a bare `Bearer` challenge and no metadata is served,
// as a server that wants a static token does.
// --authorization-server URL: the resource metadata names URL as its authorization server
// (a hostile server pointing kaja at an address it must not reach).
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';

const args = process.argv.slice(2);
const ttl = Number(args[args.indexOf('--token-ttl') + 1] ?? 3600) || 3600;
const keyOnly = args.includes('--key-only');
const asFlag = args.indexOf('--authorization-server');
const authorizationServer = asFlag >= 0 ? args[asFlag + 1] : '';

let origin = '';
let issued = 0;
const clients = new Map();   // client_id -> redirect_uris
const codes = new Map();     // code -> { challenge, clientId, redirectUri, scope, resource }
const access = new Map();    // access token -> { expiry (ms), serial }
const refresh = new Map();   // refresh token -> clientId

const log = (line) => process.stdout.write(line + '\n');
const b64url = (buffer) => buffer.toString('base64url');
const json = (response, status, body, headers = {}) => {
  response.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
};

function readBody(request) {
  return new Promise((resolve) => {
    let body = '';
    request.on('data', (chunk) => { body += chunk; });
    request.on('end', () => resolve(body));
  });
}

function issue(response, clientId, kind) {
  const token = b64url(randomBytes(24));
  const renew = b64url(randomBytes(24));
  access.set(token, { expiry: Date.now() + ttl * 1000, serial: issued + 1 });
  refresh.set(renew, clientId);
  issued += 1;
  log(`TOKEN ${kind} ${issued}`);
  json(response, 200, { access_token: token, token_type: 'Bearer', expires_in: ttl,
                        refresh_token: renew, scope: 'mcp:tools' });
}

function unauthorized(response, method) {
  log(`MCP ${method} 401`);
  const challenge = keyOnly
    ? 'Bearer realm="mcp"'
    : `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"`;
  json(response, 401, { error: 'invalid_token' }, { 'WWW-Authenticate': challenge });
}

async function mcp(request, response) {
  if (request.method !== 'POST') return json(response, 405, {});
  const message = JSON.parse((await readBody(request)) || '{}');
  const method = message.method ?? '';
  const token = (request.headers.authorization ?? '').replace(/^Bearer /, '');
  const grant = access.get(token);
  if (grant === undefined || grant.expiry < Date.now()) return unauthorized(response, method);
  log(`MCP ${method} ok`);
  if (message.id === undefined) { response.writeHead(202); return response.end(); }
  const reply = (result) => json(response, 200, { jsonrpc: '2.0', id: message.id, result });
  switch (method) {
    case 'initialize':
      return reply({ protocolVersion: '2025-11-25', capabilities: { tools: {} },
                     serverInfo: { name: 'oauth-test-server', version: '1.0.0' } });
    case 'tools/list':
      return reply({ tools: [
        { name: 'whoami', description: 'Says which token (by the order issued) the call carried.',
          inputSchema: { type: 'object', properties: {} } },
        { name: 'echo', description: 'Echoes its text.',
          inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }] });
    case 'tools/call': {
      const text = message.params?.name === 'whoami'
        ? `token #${grant.serial}` : String(message.params?.arguments?.text ?? '');
      return reply({ content: [{ type: 'text', text }] });
    }
    case 'ping':
      return reply({});
    default:
      return json(response, 200, { jsonrpc: '2.0', id: message.id,
                                   error: { code: -32601, message: `no method ${method}` } });
  }
}

async function token(request, response) {
  const form = new URLSearchParams(await readBody(request));
  if (form.get('grant_type') === 'authorization_code') {
    const grant = codes.get(form.get('code') ?? '');
    codes.delete(form.get('code') ?? '');
    const verifier = form.get('code_verifier') ?? '';
    if (!grant || grant.clientId !== form.get('client_id') ||
        grant.redirectUri !== form.get('redirect_uri') ||
        b64url(createHash('sha256').update(verifier).digest()) !== grant.challenge) {
      return json(response, 400, { error: 'invalid_grant' });
    }
    return issue(response, grant.clientId, 'code');
  }
  if (form.get('grant_type') === 'refresh_token') {
    const clientId = refresh.get(form.get('refresh_token') ?? '');
    if (!clientId || clientId !== form.get('client_id')) {
      return json(response, 400, { error: 'invalid_grant', error_description: 'unknown refresh token' });
    }
    refresh.delete(form.get('refresh_token'));
    return issue(response, clientId, 'refresh');
  }
  return json(response, 400, { error: 'unsupported_grant_type' });
}

const server = http.createServer(async (request, response) => {
  const url = new URL(request.url, origin);
  if (url.pathname === '/mcp') return mcp(request, response);
  if (keyOnly) return json(response, 404, {});
  if (url.pathname === '/.well-known/oauth-protected-resource/mcp') {
    return json(response, 200, { resource: `${origin}/mcp`,
                                 authorization_servers: [authorizationServer || origin],
                                 scopes_supported: ['mcp:tools'] });
  }
  if (url.pathname === '/.well-known/oauth-authorization-server') {
    return json(response, 200, {
      issuer: origin, authorization_endpoint: `${origin}/authorize`,
      token_endpoint: `${origin}/token`, registration_endpoint: `${origin}/register`,
      response_types_supported: ['code'], grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'], token_endpoint_auth_methods_supported: ['none'],
      authorization_response_iss_parameter_supported: true });
  }
  if (url.pathname === '/register' && request.method === 'POST') {
    const body = JSON.parse((await readBody(request)) || '{}');
    const clientId = `client-${clients.size + 1}`;
    clients.set(clientId, body.redirect_uris ?? []);
    log(`REGISTER ${clientId}`);
    return json(response, 201, { client_id: clientId, redirect_uris: body.redirect_uris,
                                 token_endpoint_auth_method: 'none' });
  }
  if (url.pathname === '/authorize') {
    const q = url.searchParams;
    const redirectUri = q.get('redirect_uri') ?? '';
    if (!(clients.get(q.get('client_id')) ?? []).includes(redirectUri) ||
        q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge') ||
        q.get('resource') !== `${origin}/mcp`) {
      return json(response, 400, { error: 'invalid_request' });
    }
    const code = b64url(randomBytes(16));
    codes.set(code, { challenge: q.get('code_challenge'), clientId: q.get('client_id'), redirectUri });
    log(`AUTHORIZE ${q.get('scope') ?? ''}`);
    const target = new URL(redirectUri);
    target.searchParams.set('code', code);
    target.searchParams.set('state', q.get('state') ?? '');
    target.searchParams.set('iss', origin);
    response.writeHead(302, { Location: target.toString() });
    return response.end();
  }
  if (url.pathname === '/token' && request.method === 'POST') return token(request, response);
  return json(response, 404, { error: 'not_found' });
});

server.listen(0, '127.0.0.1', () => {
  origin = `http://127.0.0.1:${server.address().port}`;
  log(`PORT ${server.address().port}`);
});
process.on('SIGTERM', () => process.exit(0));
