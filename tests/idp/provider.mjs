// A real OpenID provider for the OAuth tests (SPEC §20): panva's oidc-provider, pinned in
// package-lock.json, on 127.0.0.1. Started by tests/helpers/idp.py:
//
//   node provider.mjs [PORT]        (PORT or IDP_PORT; 0 or none: a free port)
//
// When it listens it prints one JSON line on stdout, {"issuer": "http://127.0.0.1:PORT"}, and
// nothing else there (the library's notices go to stderr). Configured from the environment:
//   IDP_CLIENT_ID, IDP_CLIENT_SECRET  a confidential client: client_credentials and token exchange
//   IDP_PUBLIC_CLIENT_ID              a public client: authorization code + PKCE
//   IDP_REDIRECT_URIS                 its loopback redirect URIs, separated by spaces
//   IDP_OPAQUE_RESOURCES              resources whose access tokens are opaque (checked by RFC 7662
//                                     introspection, enabled for the confidential client), by spaces
// Users sign in through the library's development login page (any password); two are known, with
// groups: ana@example.com (sre) and bob@example.com (dev).
//
// Every resource indicator (RFC 8707) is a resource server taking JWT access tokens whose `aud` is
// the resource and whose scopes are colibri:read and colibri:write. A user's token also carries
// `email` and `groups`. RFC 8693 token exchange turns a JWT access token of this issuer into one for
// another audience with the same `sub`. POST /test/rotate adds a new signing key, first in the JWKS
// (the old ones stay published so tokens already issued still verify), without a restart.
import * as crypto from 'node:crypto';
import * as http from 'node:http';

// Before the library loads: its notices use console.info, and stdout carries only the JSON line.
console.info = console.error;

const { Provider, errors } = await import('oidc-provider');
const { createLocalJWKSet, jwtVerify } = await import('jose');

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const JWT_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
const RESOURCE_SCOPES = 'colibri:read colibri:write';
const USERS = {
  'ana@example.com': { groups: ['sre'] },
  'bob@example.com': { groups: ['dev'] },
};

const env = process.env;
const port = Number(process.argv[2] ?? env.IDP_PORT ?? 0);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`provider.mjs: the port must be a number from 0 to 65535, not ${process.argv[2] ?? env.IDP_PORT}`);
  process.exit(2);
}

// Shared by every provider instance, so a session or grant outlives a key rotation (the library's
// memory adapter keeps its records at module level).
const cookieKeys = [crypto.randomBytes(32).toString('base64url')];
const signingKeys = [];
let keyNumber = 0;

function newSigningKey() {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  keyNumber += 1;
  const kid = `test-key-${keyNumber}-${crypto.randomBytes(4).toString('hex')}`;
  return { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' };
}

function publicJwks() {
  return { keys: signingKeys.map(({ kty, n, e, kid, alg, use }) => ({ kty, n, e, kid, alg, use })) };
}

function userClaims(accountId) {
  const user = USERS[accountId];
  if (user === undefined) return {};
  return { email: accountId, email_verified: true, groups: user.groups };
}

const opaqueResources = new Set((env.IDP_OPAQUE_RESOURCES ?? '').split(' ').filter(Boolean));

function resourceServerInfo(resource) {
  return {
    scope: RESOURCE_SCOPES,
    audience: resource,
    accessTokenFormat: opaqueResources.has(resource) ? 'opaque' : 'jwt',
    accessTokenTTL: 600,
    jwt: { sign: { alg: 'RS256' } },
  };
}

function clients() {
  const list = [];
  if (env.IDP_CLIENT_ID) {
    list.push({
      client_id: env.IDP_CLIENT_ID,
      client_secret: env.IDP_CLIENT_SECRET,
      grant_types: ['client_credentials', TOKEN_EXCHANGE],
      redirect_uris: [],
      response_types: [],
    });
  }
  if (env.IDP_PUBLIC_CLIENT_ID) {
    list.push({
      client_id: env.IDP_PUBLIC_CLIENT_ID,
      token_endpoint_auth_method: 'none',
      application_type: 'native', // loopback http redirect URIs are for native clients (RFC 8252)
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: (env.IDP_REDIRECT_URIS ?? '').split(' ').filter(Boolean),
    });
  }
  return list;
}

// RFC 8693: the subject_token must be a JWT access token this issuer signed, still valid.
async function tokenExchange(provider, ctx) {
  const { params, client } = ctx.oidc;
  if (![ACCESS_TOKEN_TYPE, JWT_TOKEN_TYPE].includes(params.subject_token_type)) {
    throw new errors.InvalidRequest(`subject_token_type must be ${ACCESS_TOKEN_TYPE}`);
  }
  let subject;
  try {
    ({ payload: subject } = await jwtVerify(params.subject_token, createLocalJWKSet(publicJwks()), {
      issuer: provider.issuer,
      algorithms: ['RS256'],
    }));
  } catch (err) {
    throw new errors.InvalidGrant(`subject_token is not a valid access token of this issuer (${err.message})`);
  }
  const targets = [params.resource, params.audience].flat().filter(Boolean);
  if (targets.length !== 1) {
    throw new errors.InvalidTarget('name exactly one audience or resource for the exchanged token');
  }
  const [target] = targets;
  const allowed = new Set(RESOURCE_SCOPES.split(' '));
  const asked = params.scope ? params.scope.split(' ') : String(subject.scope ?? '').split(' ');
  const token = new provider.AccessToken({
    accountId: subject.sub,
    client,
    gty: 'token-exchange',
    scope: asked.filter((scope) => allowed.has(scope)).join(' ') || undefined,
  });
  token.resourceServer = new provider.ResourceServer(target, resourceServerInfo(target));
  ctx.oidc.entity('AccessToken', token);
  ctx.body = {
    access_token: await token.save(),
    issued_token_type: ACCESS_TOKEN_TYPE,
    token_type: 'Bearer',
    expires_in: token.expiration,
    scope: token.scope,
  };
}

function buildProvider(issuer) {
  const provider = new Provider(issuer, {
    clients: clients(),
    jwks: { keys: signingKeys },
    cookies: { keys: cookieKeys },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], groups: ['groups'] },
    scopes: ['openid', 'offline_access', 'email', 'groups', ...RESOURCE_SCOPES.split(' ')],
    async findAccount(_ctx, accountId) {
      return { accountId, claims: async () => ({ sub: accountId, ...userClaims(accountId) }) };
    },
    async extraTokenClaims(_ctx, token) {
      return token.accountId ? userClaims(token.accountId) : undefined;
    },
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      registration: { enabled: true }, // MCP clients register themselves (RFC 7591)
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => oneOf,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, resource) => resourceServerInfo(resource),
      },
    },
  });
  provider.registerGrantType(
    TOKEN_EXCHANGE,
    (ctx) => tokenExchange(provider, ctx),
    ['subject_token', 'subject_token_type', 'audience', 'resource', 'scope', 'requested_token_type'],
    ['audience', 'resource'],
  );
  provider.on('server_error', (_ctx, err) => console.error('provider.mjs: server_error', err));
  return provider;
}

let handler;
const server = http.createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/test/rotate') {
    rotate(req, res);
    return;
  }
  handler(req, res);
});

function rotate(req, res) {
  const peer = req.socket.remoteAddress;
  if (peer !== '127.0.0.1' && peer !== '::ffff:127.0.0.1' && peer !== '::1') {
    res.writeHead(403).end();
    return;
  }
  const key = newSigningKey();
  signingKeys.unshift(key);
  handler = buildProvider(issuer).callback();
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kid: key.kid }));
}

signingKeys.push(newSigningKey());
let issuer;
server.listen(port, '127.0.0.1', () => {
  issuer = `http://127.0.0.1:${server.address().port}`;
  handler = buildProvider(issuer).callback();
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
});

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => process.exit(0)); // nothing to flush: every record is in memory
}
