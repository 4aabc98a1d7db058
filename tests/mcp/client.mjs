// client.mjs - one session of coil --mcp driven by an official MCP SDK
// client, for tests/mcp/sdk.py: node client.mjs SDK MODE COIL WORKDIR
// [COIL-OPTIONS...], where SDK is v1 (@modelcontextprotocol/sdk, the
// 2025 handshake) or v2 (@modelcontextprotocol/client) and MODE is
// legacy (the handshake), auto (server/discover, then 2026-07-28 or the
// handshake) or pin (2026-07-28 only).  It prints one JSON object: what
// each step saw.  The checks are sdk.py's.
const [sdk, mode, coil, workdir, ...extra] = process.argv.slice(2);

let Client, StdioClientTransport;
if (sdk === 'v1') {
  ({ Client } = await import('@modelcontextprotocol/sdk/client/index.js'));
  ({ StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js'));
} else {
  ({ Client } = await import('@modelcontextprotocol/client'));
  ({ StdioClientTransport } = await import('@modelcontextprotocol/client/stdio'));
}

const options = {};
if (sdk === 'v2' && mode !== 'legacy')
  options.versionNegotiation = { mode: mode === 'pin' ? { pin: '2026-07-28' } : 'auto' };
const client = new Client({ name: 'coil-tests', version: '1.0.0' }, options);
const transport = new StdioClientTransport({
  command: coil, args: ['--mcp', '--workdir', workdir, ...extra],
  env: { ...process.env }, stderr: 'pipe',
});
let stderr = '';
transport.stderr?.on('data', (d) => { stderr += d; });

const out = { steps: {}, log: [] };
// coil's warnings (notifications/message), whichever era delivers them.
client.fallbackNotificationHandler = async (n) => {
  if (n.method === 'notifications/message') out.log.push(n.params);
};
function text(r) {
  return (r.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('');
}
function brief(r) {
  return {
    text: text(r), isError: r.isError === true,
    structured: r.structuredContent ?? null,
    images: (r.content || []).filter((c) => c.type === 'image').map((c) => ({
      mimeType: c.mimeType, head: Buffer.from(c.data, 'base64').subarray(0, 8).toString('hex'),
    })),
  };
}
// v1 takes (params, resultSchema, options), v2 (params, options).
function call(name, args, opts) {
  const p = { name, arguments: args };
  return sdk === 'v1' ? client.callTool(p, undefined, opts) : client.callTool(p, opts);
}

try {
  await client.connect(transport);
  out.version = client.getNegotiatedProtocolVersion?.() ?? null;
  out.server = client.getServerVersion() ?? null;
  out.instructions = client.getInstructions?.() ?? null;
  const { tools } = await client.listTools();
  out.tools = tools.map((t) => ({ name: t.name, required: t.inputSchema.required ?? [],
    properties: Object.keys(t.inputSchema.properties ?? {}), annotations: t.annotations ?? null }));
  out.steps.value = brief(await call('run_python', { code: "x = 6 * 7\nprint('hi')\nx" }));
  out.steps.raise = brief(await call('run_python', { code: '1/0' }));
  out.steps.vars = brief(await call('list_variables', {}));
  out.steps.bad_args = brief(await call('run_python', { cod: '1' }));
  try {
    await call('no_such_tool', {});
    out.steps.unknown_tool = { thrown: false };
  } catch (e) {
    out.steps.unknown_tool = { thrown: true, code: e.code ?? null, message: String(e.message) };
  }
  // A cell cancelled while it runs (once its first line has come as
  // progress): the call rejects, the cell stops before its last line,
  // and the session goes on.
  const ac = new AbortController();
  const started = [];
  const slow = call('run_python', { code: "import time\nprint('started', flush=True)\ntime.sleep(60)\nflag = 1" },
    { signal: ac.signal, onprogress: (p) => { started.push(p.message ?? ''); ac.abort('stop it'); } });
  try {
    await slow;
    out.steps.cancel = { thrown: false };
  } catch (e) {
    out.steps.cancel = { thrown: true, progress: started };
  }
  out.steps.after_cancel = brief(await call('run_python', { code: "('flag' in dir(), x)" }));
  // One that ignores the interrupt: killed after its grace and restored,
  // which the next result says (and, with the handshake, a warning).
  const ac2 = new AbortController();
  const stubborn = call('run_python',
    { code: "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('started', flush=True)\ntime.sleep(60)" },
    { signal: ac2.signal, onprogress: () => ac2.abort('stop it') });
  try {
    await stubborn;
    out.steps.cancel_stubborn = { thrown: false };
  } catch (e) {
    out.steps.cancel_stubborn = { thrown: true };
  }
  out.steps.after_stubborn = brief(await call('run_python', { code: 'x' }));
  out.steps.figure = brief(await call('run_python', {
    code: "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()" }));
  out.steps.snapshot = brief(await call('snapshot', { name: 'before' }));
  await call('run_python', { code: 'x = 0' });
  out.steps.rollback = brief(await call('rollback', { to: 'before' }));
  out.steps.after_rollback = brief(await call('run_python', { code: 'x' }));
  out.steps.crash = brief(await call('run_python', { code: 'import os\nos._exit(3)' }));
  out.steps.after_crash = brief(await call('run_python', { code: 'x' }));
  out.steps.reset = brief(await call('reset', {}));
  out.steps.after_reset = brief(await call('run_python', { code: "'x' in dir()" }));
  // A lone surrogate (a string cut inside a pair), which JSON.stringify
  // writes escaped: the call is answered, not left to its timeout.
  out.steps.surrogate = brief(await call('run_python',
    { code: "s = '\ud800'\nprint(s)\n(len(s), s == chr(0xd800))" }, { timeout: 30000 }));
  // The schema's string-or-integer "to", sent as a string of digits.
  out.steps.rollback_digits = brief(await call('rollback', { to: '0' }));
} catch (e) {
  out.error = String(e.stack || e);
}
try {
  await client.close();
} catch (e) {
  out.close_error = String(e);
}
out.stderr = stderr;
process.stdout.write(JSON.stringify(out) + '\n');
