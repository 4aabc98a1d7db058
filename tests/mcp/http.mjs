// http.mjs - coil --mcp --http driven by the official MCP SDK's
// StreamableHTTPClientTransport, for tests/mcp/http-sdk.py:
// node http.mjs URL TOKEN WORKDIR.  It prints one JSON object: what
// each step saw.  The checks are http-sdk.py's.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, token, workdir] = process.argv.slice(2);
const out = { steps: {}, errors: [] };

function text(r) {
  return (r.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('');
}
function brief(r) {
  return {
    text: text(r), isError: r.isError === true,
    images: (r.content || []).filter((c) => c.type === 'image').map((c) => ({
      mimeType: c.mimeType, head: Buffer.from(c.data, 'base64').subarray(0, 8).toString('hex'),
    })),
  };
}

// A fetch that, for the call whose code holds DROP-ME, cuts the
// response's connection once the cell's first line has come as
// progress, then lets the cell finish (the file "go"): the client has
// gone away mid-cell, and the SDK reconnects with Last-Event-ID.
let dropped = false;
async function droppingFetch(input, init) {
  const res = await fetch(input, init);
  const body = typeof init?.body === 'string' ? init.body : '';
  if (dropped || !body.includes('DROP-ME') || !res.body)
    return res;
  const reader = res.body.getReader();
  let seen = '';
  const stream = new ReadableStream({
    async pull(ctl) {
      const { value, done } = await reader.read();
      if (done) { ctl.close(); return; }
      ctl.enqueue(value);
      seen += new TextDecoder().decode(value);
      if (seen.includes('notifications/progress')) {
        dropped = true;
        await reader.cancel('the client went away');
        ctl.error(new Error('connection dropped by the test'));
        writeFileSync(join(workdir, 'go'), '');
      }
    },
  });
  return new Response(stream, { status: res.status, headers: res.headers });
}

function client(headers, fetchFn) {
  const c = new Client({ name: 'coil-http-tests', version: '1.0.0' });
  const t = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers }, fetch: fetchFn,
  });
  t.onerror = (e) => out.errors.push(String(e?.message ?? e));
  return [c, t];
}

async function refused(name, headers) {
  const [c, t] = client(headers);
  try {
    await c.connect(t);
    out.steps[name] = { connected: true };
    await c.close();
  } catch (e) {
    out.steps[name] = { connected: false, code: e.code ?? null, message: String(e.message) };
  }
}

try {
  const [c, t] = client({ Authorization: `Bearer ${token}` }, droppingFetch);
  await c.connect(t);
  out.session = t.sessionId ?? null;
  out.version = t.protocolVersion ?? null;
  const { tools } = await c.listTools();
  out.tools = tools.map((x) => x.name);
  const call = (code, opts) => c.callTool({ name: 'run_python', arguments: { code } }, undefined, opts);
  out.steps.value = brief(await call("x = 6 * 7\nprint('hi')\nx"));
  out.steps.next = brief(await call('x + 1'));
  out.steps.raise = brief(await call('1/0'));
  out.steps.figure = brief(await call(
    "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3])"));
  const progress = [];
  out.steps.progress = brief(await call(
    "import sys\nfor i in range(3):\n    print('line', i, flush=True)\n'done'",
    { onprogress: (p) => progress.push(p.message ?? '') }));
  out.steps.progress.messages = progress;
  // Cancelled while it runs: the SDK sends notifications/cancelled.
  const ac = new AbortController();
  try {
    await call("import time\nprint('started', flush=True)\ntime.sleep(60)\nflag = 1",
      { signal: ac.signal, onprogress: () => ac.abort('stop it') });
    out.steps.cancel = { thrown: false };
  } catch (e) {
    out.steps.cancel = { thrown: true, message: String(e.message) };
  }
  out.steps.after_cancel = brief(await call("'flag' in globals()"));
  // Dropped mid-cell: the answer comes on the resumed stream.
  const seen = [];
  out.steps.drop = brief(await call(
    "import os, time\n# DROP-ME\nprint('started', flush=True)\n" +
    "while not os.path.exists('go'):\n    time.sleep(0.01)\nprint('finished')\n'kept'",
    { onprogress: (p) => seen.push(p.message ?? ''), resetTimeoutOnProgress: true }));
  out.steps.drop.dropped = dropped;
  out.steps.drop.progress = seen;
  out.steps.after_drop = brief(await call('x'));
  await t.terminateSession();
  out.steps.terminated = t.sessionId ?? null;
  await c.close();
} catch (e) {
  out.error = String(e?.stack ?? e);
}
await refused('no_token', {});
await refused('wrong_token', { Authorization: 'Bearer not-the-token-at-all' });
await refused('wrong_origin', { Authorization: `Bearer ${token}`, Origin: 'http://evil.example' });
console.log(JSON.stringify(out));
process.exit(0);
