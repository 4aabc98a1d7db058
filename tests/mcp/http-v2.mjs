// http-v2.mjs - coil --mcp --http under the v2 SDK client
// (@modelcontextprotocol/client) in one way of agreeing on a revision,
// for tests/mcp/http-sdk.py: node http-v2.mjs URL TOKEN MODE, MODE one
// of legacy (the handshake), auto (server/discover first) and pin
// (2026-07-28 alone, no session).  It prints one JSON object.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, token, mode] = process.argv.slice(2);
const options = mode === 'legacy' ? {} :
  { versionNegotiation: { mode: mode === 'pin' ? { pin: '2026-07-28' } : 'auto' } };
const c = new Client({ name: 'coil-http-tests', version: '1.0.0' }, options);
const t = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const out = {};
const text = (r) => (r.content || []).filter((x) => x.type === 'text').map((x) => x.text).join('');
try {
  await c.connect(t);
  out.version = c.getNegotiatedProtocolVersion?.() ?? null;
  out.session = t.sessionId ?? null;
  out.first = text(await c.callTool({ name: 'run_python', arguments: { code: `v_${mode} = 21\nv_${mode} * 2` } }));
  const progress = [];
  out.second = text(await c.callTool({ name: 'run_python', arguments: { code: `print('p')\nv_${mode}` } },
    { onprogress: (p) => progress.push(p.message ?? '') }));
  out.progress = progress;
  await c.close();
} catch (e) {
  out.error = String(e?.stack ?? e);
}
console.log(JSON.stringify(out));
process.exit(0);
