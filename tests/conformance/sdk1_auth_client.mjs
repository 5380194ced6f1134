// The official TypeScript SDK 1.x client (tests/npm: @modelcontextprotocol/sdk) under the
// conformance suite's client authorization scenarios (auth/*), for comparison with
// kaja-conformance-client; run it with sdk1_auth_table. Same contract as sdk1_client.mjs:
// the server URL is the last argument, the scenario in MCP_CONFORMANCE_SCENARIO, data in
// MCP_CONFORMANCE_CONTEXT. It uses only the SDK's own OAuth support: an in-memory
// OAuthClientProvider handed to StreamableHTTPClientTransport (or, where the context
// carries client-credentials data, the SDK's ClientCredentialsProvider or
// PrivateKeyJwtProvider). It plays the user agent headlessly: when the SDK redirects to the
// authorization URL, it fetches that URL without following redirects and takes `code` from
// the Location header, then calls transport.finishAuth(code) and reconnects (or, when the
// SDK's 403 insufficient_scope handling asked for a new authorization in mid-session,
// retries the request). It adds no OAuth step of its own, so what the SDK lacks shows.
// Then it lists tools and calls each one. Not part of the test suite; see the README.
import { Client } from '../npm/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StreamableHTTPClientTransport } from '../npm/node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js';
import { UnauthorizedError } from '../npm/node_modules/@modelcontextprotocol/sdk/dist/esm/client/auth.js';
import {
  ClientCredentialsProvider,
  PrivateKeyJwtProvider
} from '../npm/node_modules/@modelcontextprotocol/sdk/dist/esm/client/auth-extensions.js';

const url = process.argv[process.argv.length - 1];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = process.env.MCP_CONFORMANCE_CONTEXT ? JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT) : {};
const redirectUrl = 'http://localhost:3000/callback';
const clientMetadataUrl = 'https://conformance-test.local/client-metadata.json';
// At most this many trips through the authorization endpoint per run, so a server that
// keeps asking for scopes it never grants cannot loop us.
const maxAuthorizations = 3;

// Keeps everything in memory; stores what the SDK hands it unchanged (the SDK stamps the
// authorization server's URL into `issuer` and compares it on read).
class InMemoryOAuthClientProvider {
  constructor(clientInformation) {
    this._clientInformation = clientInformation;
    this._tokens = undefined;
    this._codeVerifier = undefined;
    this._discoveryState = undefined;
    this.authorizationCode = undefined;
    this.authorizations = 0;
  }
  get redirectUrl() { return redirectUrl; }
  get clientMetadataUrl() { return clientMetadataUrl; }
  get clientMetadata() {
    return {
      client_name: 'sdk1-conformance-auth-client',
      redirect_uris: [redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      // A command-line client cannot keep a secret: a public client, protected by PKCE.
      token_endpoint_auth_method: 'none'
    };
  }
  clientInformation() { return this._clientInformation; }
  saveClientInformation(clientInformation) { this._clientInformation = clientInformation; }
  tokens() { return this._tokens; }
  saveTokens(tokens) { this._tokens = tokens; }
  saveCodeVerifier(codeVerifier) { this._codeVerifier = codeVerifier; }
  codeVerifier() {
    if (!this._codeVerifier) throw new Error('no PKCE code verifier saved');
    return this._codeVerifier;
  }
  saveDiscoveryState(state) { this._discoveryState = state; }
  discoveryState() { return this._discoveryState; }
  invalidateCredentials(scope) {
    if (scope === 'all' || scope === 'tokens') this._tokens = undefined;
    if (scope === 'all' || scope === 'client') this._clientInformation = undefined;
    if (scope === 'all' || scope === 'verifier') this._codeVerifier = undefined;
    if (scope === 'all' || scope === 'discovery') this._discoveryState = undefined;
  }
  // The user agent: open the authorization URL, where the test server approves at once and
  // redirects to redirect_uri; the redirect's `code` is what our callback would receive.
  async redirectToAuthorization(authorizationUrl) {
    this.authorizationCode = undefined;
    if (++this.authorizations > maxAuthorizations) {
      throw new Error(`giving up after ${maxAuthorizations} authorizations`);
    }
    console.error(`authorize: ${authorizationUrl}`);
    const response = await fetch(authorizationUrl, { redirect: 'manual' });
    const location = response.headers.get('location');
    if (!location) throw new Error(`authorization endpoint answered ${response.status} without a redirect`);
    const callback = new URL(location, authorizationUrl);
    const code = callback.searchParams.get('code');
    if (!code) throw new Error(`authorization redirect without a code: ${location}`);
    this.authorizationCode = code;
  }
  takeAuthorizationCode() {
    const code = this.authorizationCode;
    this.authorizationCode = undefined;
    return code;
  }
}

function makeProvider() {
  if (context.private_key_pem) {
    return new PrivateKeyJwtProvider({
      clientId: context.client_id,
      privateKey: context.private_key_pem,
      algorithm: context.signing_algorithm ?? 'ES256'
    });
  }
  if (scenario.startsWith('auth/client-credentials') && context.client_secret) {
    return new ClientCredentialsProvider({ clientId: context.client_id, clientSecret: context.client_secret });
  }
  // Pre-registered client information, when the context has it.
  const preRegistered = context.client_id
    ? { client_id: context.client_id, ...(context.client_secret ? { client_secret: context.client_secret } : {}) }
    : undefined;
  return new InMemoryOAuthClientProvider(preRegistered);
}

function argumentsFor(tool) {
  const args = {};
  const properties = tool.inputSchema?.properties ?? {};
  for (const name of tool.inputSchema?.required ?? []) {
    const type = properties[name]?.type ?? 'string';
    args[name] = { integer: 1, number: 1.5, boolean: true, object: {}, array: [] }[type] ?? 'test';
  }
  return args;
}

const provider = makeProvider();

// The SDK throws UnauthorizedError after it has sent the user agent to the authorization
// endpoint; our provider has the code by then.
function pendingCode(error) {
  return error instanceof UnauthorizedError && provider instanceof InMemoryOAuthClientProvider
    ? provider.takeAuthorizationCode()
    : undefined;
}

async function connect() {
  for (;;) {
    const client = new Client({ name: 'sdk1-conformance-auth-client', version: '1.0.0' }, { capabilities: {} });
    const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
    try {
      await client.connect(transport);
      return { client, transport };
    } catch (error) {
      const code = pendingCode(error);
      if (!code) throw error;
      console.error('connect: authorization needed; finishing it and reconnecting');
      await transport.finishAuth(code);
      await client.close().catch(() => {});
    }
  }
}

async function withAuthorization(transport, request) {
  for (;;) {
    try {
      return await request();
    } catch (error) {
      const code = pendingCode(error);
      if (!code) throw error;
      console.error('request: authorization needed; finishing it and retrying');
      await transport.finishAuth(code);
    }
  }
}

const { client, transport } = await connect();
const { tools } = await withAuthorization(transport, () => client.listTools());
let failed = false;
for (const tool of tools) {
  const call = { name: tool.name, arguments: argumentsFor(tool) };
  try {
    const result = await withAuthorization(transport, () => client.callTool(call));
    console.error(`tools/call ${call.name}: ${JSON.stringify(result)}`);
  } catch (error) {
    failed = true;
    console.error(`tools/call ${call.name}: ${error.message}`);
  }
}
await client.close();
process.exit(failed ? 1 : 0);
