// branches.mjs - a model's best-of-n over one MCP connection, driven by
// an official MCP SDK client, for tests/mcp/branches.py:
// node branches.mjs SDK COIL WORKDIR [COIL-OPTIONS...], SDK v1
// (@modelcontextprotocol/sdk) or v2 (@modelcontextprotocol/client), both
// with the handshake.  From one state it forks three branches, sets a
// variable differently in each and reads each back, adopts one, and
// tries what must be refused.  It prints one JSON object: what each step
// saw.  The checks are branches.py's.
const [sdk, coil, workdir, ...extra] = process.argv.slice(2);

let Client, StdioClientTransport;
if (sdk === 'v1') {
  ({ Client } = await import('@modelcontextprotocol/sdk/client/index.js'));
  ({ StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js'));
} else {
  ({ Client } = await import('@modelcontextprotocol/client'));
  ({ StdioClientTransport } = await import('@modelcontextprotocol/client/stdio'));
}

const client = new Client({ name: 'coil-tests', version: '1.0.0' }, {});
const transport = new StdioClientTransport({
  command: coil, args: ['--mcp', '--workdir', workdir, ...extra],
  env: { ...process.env }, stderr: 'pipe',
});
let stderr = '';
transport.stderr?.on('data', (d) => { stderr += d; });

const out = { steps: {} };
function brief(r) {
  return {
    text: (r.content || []).filter((c) => c.type === 'text').map((c) => c.text).join(''),
    isError: r.isError === true, structured: r.structuredContent ?? null,
  };
}
function call(name, args) {
  const p = { name, arguments: args };
  return sdk === 'v1' ? client.callTool(p) : client.callTool(p, {});
}
async function step(key, name, args) {
  out.steps[key] = brief(await call(name, args));
  return out.steps[key];
}

try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  out.tools = Object.fromEntries(tools.map((t) => [t.name, {
    required: t.inputSchema.required ?? [],
    properties: Object.keys(t.inputSchema.properties ?? {}),
    annotations: t.annotations ?? null }]));

  await step('base', 'run_python', { code: "base = 'shared'\nx = 0\nx" });
  const fork = await step('fork', 'fork', { n: 3 });
  const names = fork.structured?.sessions ?? [];
  // Each branch its own x, then each read back after all were set.
  for (const [i, s] of names.entries())
    await step('set_' + s, 'run_python', { code: `x = ${i + 1} * 10`, session: s });
  for (const s of names)
    await step('read_' + s, 'run_python', { code: '(x, base)', session: s });
  await step('read_main', 'run_python', { code: '(x, base)' });
  await step('vars_b2', 'list_variables', { session: names[1] });
  // A snapshot, a rollback and a crash in one branch touch no other.
  await step('snapshot_b3', 'snapshot', { name: 'mine', session: names[2] });
  await call('run_python', { code: 'x = 31', session: names[2] });
  await step('rollback_b3', 'rollback', { to: 'mine', session: names[2] });
  await step('after_rollback_b3', 'run_python', { code: 'x', session: names[2] });
  await step('rollback_main', 'rollback', { to: 'mine' });
  await step('crash_b3', 'run_python', { code: 'import os\nos._exit(3)', session: names[2] });
  await step('after_crash_b3', 'run_python', { code: 'x', session: names[2] });
  await step('after_crash_b1', 'run_python', { code: 'x', session: names[0] });
  await step('list', 'list_sessions', {});

  // What must be refused, each leaving the sessions as they were.
  await step('unknown', 'run_python', { code: '1', session: 'nope' });
  await step('bad_type', 'run_python', { code: '1', session: 5 });
  await step('taken', 'fork', { name: names[0] });
  await step('past_max', 'fork', { n: 2 });
  await step('list_after_refusals', 'list_sessions', {});

  // Keep b2: calls without a session argument go to it.
  await step('adopt', 'adopt_session', { session: names[1] });
  await step('after_adopt', 'run_python', { code: 'x' });
  await step('list_adopted', 'list_sessions', {});
  await step('close_b1', 'close_session', { session: names[0] });
  await step('closed_b1', 'run_python', { code: 'x', session: names[0] });
  await step('close_b3', 'close_session', { session: names[2] });
  await step('close_main', 'close_session', { session: 'main' });
  await step('close_last', 'close_session', { session: names[1] });
  await step('last_lives', 'run_python', { code: 'x' });
  await step('list_end', 'list_sessions', {});
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
