// The official TypeScript SDK client (pinned 1.32.2 in tests/http/npm) signing in to Colibri by
// itself (SPEC §20, Discovery for clients): nothing but the server's URL and the client's own
// registration is given; the SDK reads the 401, the protected-resource metadata, the provider's
// metadata, gets a token and calls tools.
//
// Usage: node ts_client.mjs SPEC.json; stdout carries JSON lines:
//   {"authorize": URL}   authorization code only: the URL a browser opens; the script then waits
//                        for one line on stdin, the redirect location the sign-in came back to
//   {"report": {...}}    last: {server, calls: [...], requests: [...], accessToken, error}
// SPEC: {"url", "flow": "client_credentials" | "authorization_code", "issuer", "clientId",
//        "clientSecret" and "scope" (client credentials), "redirectUrl" (authorization code),
//        "calls": [{"tool", "arguments", "save"}]}; a string "$KEY.a.b" in arguments is that field
//        of the result saved under KEY (tests/helpers/references.mjs).
// `requests` lists every HTTP request the SDK made (method, url, status, whether it carried a
// bearer token, and a token request's grant_type, resource and scope), so pytest can judge the
// discovery itself. Assertions live in pytest.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { resolver } from '../helpers/references.mjs';

// The SDK is installed once, in tests/http/npm; this folder has no node_modules of its own.
const SDK = new URL('../http/npm/node_modules/@modelcontextprotocol/sdk/dist/esm/client/', import.meta.url);
const { Client } = await import(new URL('index.js', SDK));
const { StreamableHTTPClientTransport } = await import(new URL('streamableHttp.js', SDK));
const { UnauthorizedError } = await import(new URL('auth.js', SDK));
const { ClientCredentialsProvider } = await import(new URL('auth-extensions.js', SDK));

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const report = { server: null, calls: [], requests: [], accessToken: null, error: null };
const saved = {};
const resolve = resolver(saved);

function emit(line) {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

// Every request the SDK makes goes through here: the transport hands this fetch to its auth flow too.
async function recordingFetch(input, init) {
  const url = input instanceof Request ? input.url : String(input);
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  const entry = {
    method: init?.method ?? (input instanceof Request ? input.method : 'GET'),
    url,
    bearer: (headers.get('authorization') ?? '').startsWith('Bearer '),
  };
  if (init?.body instanceof URLSearchParams) {
    const form = init.body;
    entry.form = { grant_type: form.get('grant_type'), resource: form.get('resource'), scope: form.get('scope') };
  }
  report.requests.push(entry);
  const response = await fetch(input, init);
  entry.status = response.status;
  return response;
}

// An interactive client as Claude Code or VS Code is one: pre-registered public client, PKCE, and a
// browser it cannot drive itself, so the authorization URL goes out and the redirect comes back in.
class LoopbackProvider {
  constructor(clientId, redirectUrl) {
    this._client = { client_id: clientId };
    this._redirectUrl = redirectUrl;
    this._state = randomBytes(16).toString('base64url');
    this._tokens = undefined;
    this._verifier = undefined;
  }
  get redirectUrl() {
    return this._redirectUrl;
  }
  get clientMetadata() {
    return {
      client_name: 'colibri-ts-test',
      redirect_uris: [this._redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() {
    return this._state;
  }
  clientInformation() {
    return this._client;
  }
  saveClientInformation(information) {
    this._client = information;
  }
  tokens() {
    return this._tokens;
  }
  saveTokens(tokens) {
    this._tokens = tokens;
  }
  redirectToAuthorization(url) {
    emit({ authorize: url.href });
  }
  saveCodeVerifier(verifier) {
    this._verifier = verifier;
  }
  codeVerifier() {
    if (this._verifier === undefined) throw new Error('no code verifier saved: no authorization was started');
    return this._verifier;
  }
}

async function redirectLocation() {
  const lines = createInterface({ input: process.stdin });
  try {
    for await (const line of lines) return line.trim();
  } finally {
    lines.close();
  }
  throw new Error('stdin ended before the redirect location came');
}

function connectWith(provider) {
  const transport = new StreamableHTTPClientTransport(new URL(spec.url), {
    authProvider: provider,
    fetch: recordingFetch,
  });
  return { transport, client: new Client({ name: 'colibri-oauth-interop', version: '1.0.0' }) };
}

async function connected(provider) {
  const first = connectWith(provider);
  try {
    await first.client.connect(first.transport);
    return first.client;
  } catch (error) {
    if (!(error instanceof UnauthorizedError) || spec.flow !== 'authorization_code') throw error;
  }
  const location = new URL(await redirectLocation());
  if (location.searchParams.get('state') !== provider.state()) {
    throw new Error(`the redirect came back with another state: ${location.href}`);
  }
  const code = location.searchParams.get('code');
  if (!code) throw new Error(`the redirect carries no code: ${location.href}`);
  await first.transport.finishAuth(code);
  const again = connectWith(provider);
  await again.client.connect(again.transport);
  return again.client;
}

function provider() {
  if (spec.flow === 'client_credentials') {
    // The SDK asks for the provider's configured scope only (1.32.2's fetchToken reads
    // clientMetadata.scope, not the 401's scope nor a 403's step-up scope), so a machine client
    // names the scopes it was registered for, as it names its id and secret.
    return new ClientCredentialsProvider({
      clientId: spec.clientId,
      clientSecret: spec.clientSecret,
      expectedIssuer: spec.issuer,
      scope: spec.scope,
    });
  }
  if (spec.flow === 'authorization_code') return new LoopbackProvider(spec.clientId, spec.redirectUrl);
  throw new Error(`flow must be client_credentials or authorization_code, not ${spec.flow}`);
}

const signingIn = provider();
try {
  const client = await connected(signingIn);
  report.server = client.getServerVersion();
  for (const call of spec.calls) {
    const entry = { tool: call.tool, threw: null };
    try {
      const result = await client.callTool({ name: call.tool, arguments: resolve(call.arguments ?? {}) });
      entry.isError = result.isError ?? false;
      entry.structuredContent = result.structuredContent ?? null;
      if (call.save) saved[call.save] = result.structuredContent;
    } catch (error) {
      entry.threw = `${error?.name}: ${error?.message}`;
    }
    report.calls.push(entry);
  }
  await client.close();
  // The token the SDK got, so pytest can tie the audit rows to its sub and jti.
  report.accessToken = (await signingIn.tokens())?.access_token ?? null;
} catch (error) {
  // A failed sign-in is reported, not thrown: pytest shows it with the requests that led to it.
  report.error = `${error?.name}: ${error?.message}`;
}
emit({ report });
// stdin may still be open (client credentials never read it): nothing else keeps the script alive.
process.exit(0);
