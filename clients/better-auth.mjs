// Better Auth with its JWT plugin, set up as README's "Identity providers"
// shows, as the identity provider of taskchat's tests.
//
// It serves Better Auth on a free loopback port, signs a user up and gets
// their JWT with Better Auth's own client, exactly as a web app does, then
// prints one JSON line:
//
//   {"base_url": "...", "jwks_url": ".../api/auth/jwks", "user_id": "...", "token": "..."}
//
// and keeps serving (the JWKS above all) until its stdin closes.
//
// usage: node better-auth.mjs
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { betterAuth } from 'better-auth';
import { memoryAdapter } from 'better-auth/adapters/memory';
import { jwt } from 'better-auth/plugins';
import { toNodeHandler } from 'better-auth/node';
import { createAuthClient } from 'better-auth/client';
import { jwtClient } from 'better-auth/client/plugins';

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const baseURL = `http://127.0.0.1:${server.address().port}`;

// The server side: the JWT plugin with its defaults (EdDSA keys, the JWKS
// at /api/auth/jwks, iss and aud both baseURL, 15-minute tokens).
const auth = betterAuth({
  baseURL,
  secret: randomBytes(32).toString('hex'),
  database: memoryAdapter({ user: [], session: [], account: [], verification: [], jwks: [] }),
  emailAndPassword: { enabled: true },
  plugins: [jwt()],
  telemetry: { enabled: false },
});
server.on('request', toNodeHandler(auth));

// The client side, as in a browser, where the session cookie and the
// Origin header come for free; here they are passed by hand.
let cookie = '';
const authClient = createAuthClient({
  baseURL,
  plugins: [jwtClient()],
  fetchOptions: { headers: { origin: baseURL } },
});
const signUp = await authClient.signUp.email(
  { email: `user-${randomBytes(4).toString('hex')}@example.com`, password: 'correct horse battery staple', name: 'Test User' },
  { onSuccess: (ctx) => { cookie = ctx.response.headers.getSetCookie().map((c) => c.split(';')[0]).join('; '); } },
);
if (signUp.error) fail('sign-up', signUp.error);
const { data, error } = await authClient.token({ fetchOptions: { headers: { cookie } } });
if (error) fail('token', error);

process.stdout.write(JSON.stringify({
  base_url: baseURL,
  jwks_url: `${baseURL}/api/auth/jwks`,
  user_id: signUp.data.user.id,
  token: data.token,
}) + '\n');

process.stdin.resume();
process.stdin.on('end', () => process.exit(0));

function fail(step, err) {
  process.stderr.write(`better-auth.mjs: ${step}: ${JSON.stringify(err)}\n`);
  process.exit(1);
}
