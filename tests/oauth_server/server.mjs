// The authorization server of talkie's sign-in tests: oidc-provider on 127.0.0.1 only.
//
// Environment:
//   PORT                    port on 127.0.0.1 (0 or unset: a free one; the ready line names it)
//   ACCESS_TTL              access-token lifetime in whole seconds (default 60)
//   CLIENT_ID               the talkie public client (default: the shipped CIMD URL)
//   RESOURCE_CLIENT_ID      confidential client the reference server introspects with
//   RESOURCE_CLIENT_SECRET  its secret (test-only defaults below; this server is loopback-only)
//   AUDIENCE                resource / audience of the access tokens
//   CIMD_FILE               optional Client ID Metadata Document; when set, CLIENT_ID is not
//                           pre-registered but resolved through that document
//
// Prints `ready http://127.0.0.1:PORT` on stdout once it accepts connections.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

import Provider from 'oidc-provider';

const HOST = '127.0.0.1';
const env = process.env;

function fail(message) {
  process.stderr.write(`oauth_server: ${message}\n`);
  process.exit(2);
}

const port = Number(env.PORT ?? 0);
if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`bad PORT ${env.PORT}`);
const accessTtl = Number(env.ACCESS_TTL ?? 60);
// oidc-provider only accepts a positive integer here (configuration_result.js).
if (!Number.isInteger(accessTtl) || accessTtl < 1) fail(`ACCESS_TTL must be a whole number of seconds, got ${env.ACCESS_TTL}`);
const clientId = env.CLIENT_ID || 'https://talkie.firemni-crm.cz/oauth/terminal.json';
const resourceClientId = env.RESOURCE_CLIENT_ID || 'talkie-reference-server';
const resourceClientSecret = env.RESOURCE_CLIENT_SECRET || 'test-only-introspection-secret';
const audience = env.AUDIENCE || 'https://talkie.test/api';
const cimdFile = env.CIMD_FILE || null;

let cimdText = null;
if (cimdFile) {
  try {
    cimdText = readFileSync(cimdFile, 'utf8');
    JSON.parse(cimdText);
  } catch (error) {
    fail(`cannot read CIMD_FILE ${cimdFile}: ${error.message}`);
  }
}

// Bind first, so the issuer can name the real port even when PORT=0 (no pick-then-bind race).
const server = createServer();
server.on('error', (error) => fail(`cannot listen on ${HOST}:${port}: ${error.message}`));
await new Promise((resolve) => server.listen(port, HOST, resolve));
const issuer = `http://${HOST}:${server.address().port}`;

// A fresh signing key per run keeps oidc-provider from using (and warning about) its dev keys.
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: 'jwk' }), use: 'sig', alg: 'RS256', kid: 'test' };

const talkieClient = {
  client_id: clientId,
  client_name: 'Talkie for the terminal',
  // native: oidc-provider lets any loopback port match only for native clients (RFC 8252 §7.3).
  application_type: 'native',
  token_endpoint_auth_method: 'none',
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  redirect_uris: ['http://127.0.0.1/callback'],
};
const resourceClient = {
  client_id: resourceClientId,
  client_secret: resourceClientSecret,
  token_endpoint_auth_method: 'client_secret_basic',
  grant_types: [],
  response_types: [],
  redirect_uris: [],
};

// Serves the CIMD for its URL and refuses everything else: the tests make no outside requests.
async function offlineFetch(url) {
  if (cimdText !== null && String(url) === clientId) {
    return new Response(cimdText, {
      status: 200,
      headers: { 'content-type': 'application/json', 'cache-control': 'max-age=60' },
    });
  }
  throw new Error(`oauth_server makes no network requests (asked for ${url})`);
}

const provider = new Provider(issuer, {
  clients: cimdText === null ? [talkieClient, resourceClient] : [resourceClient],
  scopes: ['openid', 'offline_access', 'talkie'],
  jwks: { keys: [signingKey] },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  fetch: offlineFetch,
  features: {
    devInteractions: { enabled: true },
    revocation: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => audience,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        scope: 'talkie',
        audience,
        accessTokenTTL: accessTtl,
        accessTokenFormat: 'opaque',
      }),
    },
    ...(cimdText === null ? {} : { clientIdMetadataDocument: { enabled: true, ack: 'draft-02' } }),
  },
  // The default revokeGrantPolicy already revokes the whole grant (its access tokens included)
  // when a refresh token is revoked; only revoking an access token leaves the grant alone.
  ttl: {
    AccessToken: accessTtl,
    AuthorizationCode: 60,
    RefreshToken: 3600,
    Interaction: 600,
    Session: 3600,
    Grant: 3600,
    IdToken: 3600,
  },
});

server.on('request', provider.callback());
process.stdout.write(`ready ${issuer}\n`);

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    server.close();
    server.closeAllConnections();
    process.exit(0);
  });
}
