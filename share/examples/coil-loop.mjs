#!/usr/bin/env node
// coil-loop.mjs - a model and a persistent Python session: a whole tool loop.
//
//     OPENAI_API_KEY=sk-... ./coil-loop.mjs "plot sin(x); its maxima?"
//     ANTHROPIC_API_KEY=sk-ant-... ./coil-loop.mjs --mcp "..."
//
// The loop sends the task to OpenAI's Chat Completions API or Anthropic's
// Messages API with coil's tools, runs each tool call in one coil session,
// sends the answers back, and stops when the model answers in words or
// after --max-turns turns.  The tool definitions (`coil --tool-schema
// openai|anthropic`) and the system text (`coil --system-prompt`) come
// from the coil it runs, so nothing here goes stale.
//
// coil runs in agent mode (`coil --agent`: a JSON object a line, each tool
// an op) or, with --mcp, as an MCP server (`coil --mcp`: JSON-RPC,
// tools/call).  Either way the model gets the same things:
//   - restored: when the Python process died (a crash, a cell killed at
//     its timeout), what the namespace is back at and what was lost;
//   - timeouts: every cell has one (--timeout, or the model's own
//     `timeout`), and a cell stopped by it is said to be;
//   - figures: sent as images, in each API's own form;
//   - errors: a cell that raised, arguments coil refused, an unknown
//     tool: the tool's result says so, for the model to mend.
//
// Node 20 or later, no packages: copy the file and make it yours.  Its
// twin in Python, coil-loop.py, is built the same way, with the same names.
//
// Environment: OPENAI_API_KEY or ANTHROPIC_API_KEY (the API is the one
// whose key is set, or --api), OPENAI_BASE_URL and ANTHROPIC_BASE_URL
// (read as the official SDKs read them), COIL (the coil to run, default
// `coil` on PATH).  Exit status: 0 when the model answered, 1 on an
// error, 3 when --max-turns ran out first, 4 when the model's answer was
// cut at the token limit (--max-tokens), 5 when the model refused or the
// API's content filter stopped it; 128 + N when signal N stopped the loop
// (coil is closed and the --log written first).
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { parseArgs } from "node:util";

const MODELS = { openai: "gpt-4.1", anthropic: "claude-sonnet-4-5" };
// Each tool is one agent op; its arguments are the op's fields (coil(1)).
const OPS = {
  run_python: "exec", list_variables: "vars", inspect: "inspect",
  snapshot: "snapshot", list_snapshots: "snapshots", rollback: "rollback",
  reset: "reset", fork: "fork", list_sessions: "sessions",
  close_session: "close", adopt_session: "adopt",
};
// The most one image may be: Anthropic counts its base64 text (5 MiB),
// OpenAI its bytes (20 MB).  The loop reads a figure up to the larger.
const MAX_IMAGE = { openai: 20_000_000, anthropic: 5 << 20 };
const MAX_FIGURE = 20_000_000;
// What the model gets for a tool call its reply cut short.
const CUT_CALL = "your reply was cut at max_tokens before this call was " +
  "complete; send a shorter cell";
const CUT = Symbol("cut");  // a call's arguments, when the cut fell in them
// Exit statuses beyond 0, 1 (an error) and 3 (--max-turns ran out).
const EXIT_CUT = 4, EXIT_REFUSED = 5;
// How long close() waits for coil to end once its input is closed: a
// running cell's grace (coil's --grace, 2 s by default) and some more.
const CLOSE_WAIT = (5 + 2) * 1000;
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

class Fatal extends Error {}

function say(...what) {
  console.error("coil-loop:", ...what);
}

// What `coil ARGS` prints: its tool definitions, its system text (given
// the session's options, which they speak of).
function coilPrints(coil, ...args) {
  const r = spawnSync(coil, args, { encoding: "utf8" });
  if (r.status !== 0)
    throw new Fatal(`'${coil} ${args.join(" ")}' failed: ` +
                    (r.error?.message ?? r.stderr.trim()));
  return r.stdout;
}

// ---- coil as the tool ---------------------------------------------------

// `restored` in plain words: the model must know what it lost.
function restoredNote(answer) {
  const r = answer.restored;
  const why = answer.status === "timeout"
    ? "the cell ran past its timeout and its process was killed"
    : "the Python process died";
  let text = r.cell == null
    ? why + " and nothing could be restored: the namespace is empty, as " +
      "in a new session (import and define again what you need)."
    : `${why}; the namespace was restored to its state after cell ` +
      `${r.cell}: what later cells defined is gone.`;
  if (r.redone?.length)
    text += " Run again, and answered as before: cells " +
            `${r.redone.join(", ")}.`;
  for (const d of r.differs ?? [])
    text += ` Cell ${d.cell} answered differently when run again: ` +
            `${JSON.stringify(d.first)}.`;
  if (r.lost?.length) {
    const whys = (r.lost_why ?? []).map((w) => `${w.cell}: ${w.why}`);
    const whyLost = whys.join("; ") || "see coil(1)";
    text += ` Lost, not run again: cells ${r.lost.join(", ")} ` +
            `(${whyLost}); run them again if you need what they made.`;
  }
  if (r.threads_lost)
    text += ` ${r.threads_lost} threads the cells started are gone.`;
  return "\n[coil restored] " + text + "\n";
}

// A tool's result for the model: coil's text, and what the loop adds (the
// same in both modes; answer is the agent answer or MCP's
// structuredContent, which has the same fields).
function finish(args, answer, text, images, isError, timeout) {
  if (answer.status === "timeout")
    text += `\n[coil timeout] the cell ran past its timeout ` +
            `(${args.timeout ?? timeout} s) and was stopped. Give ` +
            "run_python a larger timeout (seconds) for long work, or " +
            "split it into shorter cells.\n";
  if (answer.restored)
    text += restoredNote(answer);
  else if (["timeout", "interrupted"].includes(answer.status))
    text += "\n[coil] the interrupt stopped it: the namespace is as the " +
            "cell left it, what it did before the stop stays.\n";
  return { text: text.trimEnd() || "(no output)", images, is_error: isError };
}

// A figure's PNG bytes, or null.  A cell can put a link where a figure
// was, so the file is opened without following one, and taken only if it
// is a regular PNG file in the work directory (which cells may read
// anyway), with one name (a hard link could be another file of yours):
// nothing else of yours goes to the API.
function readFigure(file, workdir) {
  const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
  let fd;
  try {
    fd = fs.openSync(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const real = fs.readlinkSync(`/proc/self/fd/${fd}`);
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.nlink !== 1 || st.size > MAX_FIGURE ||
        !real.startsWith(workdir + path.sep))
      return null;
    const buf = Buffer.alloc(st.size + 1);
    const data = buf.subarray(0, fs.readSync(fd, buf, 0, buf.length, 0));
    return data.subarray(0, 8).equals(PNG) && data.length <= MAX_FIGURE
      ? data : null;
  } finally {
    fs.closeSync(fd);
  }
}

// An agent answer as the model reads it, worded as coil --mcp words it:
// what the cell printed, its stderr marked, the traceback, Out[N];
// another op's answer is its fields.
function answerText(answer) {
  const line = (s) => (s === "" || s.endsWith("\n") ? s : s + "\n");
  if (answer.status === "invalid")
    return `${answer.error.type}: ${answer.error.message}\n`;
  if (!("output" in answer)) {
    const { id, ...fields } = answer;
    return JSON.stringify(fields);
  }
  const err = answer.error ?? {};
  let text = line(answer.output ?? "");
  if (answer.stderr)
    text += "[stderr]\n" + line(answer.stderr);
  text += line(err.traceback ?? "");
  if (answer.error && !(err.traceback ?? "").includes(err.message))
    text += `${err.type}: ${err.message}\n`;
  if (err.hint)
    text += `hint: ${err.hint}\n`;
  if (answer.result != null)
    text += `Out[${answer.cell}]: ${answer.result}\n`;
  for (const w of answer.warnings ?? [])
    text += `warning: ${w}\n`;
  return text;
}

class CoilGone extends Error {}

// A coil running as the tool, in one mode: "--agent" or "--mcp".
class CoilProcess {
  constructor(coil, mode, coilOptions, workdir, timeout) {
    this.workdir = fs.realpathSync(workdir);
    this.timeout = timeout;
    this.proc = spawn(coil, [mode, ...coilOptions],
                      { stdio: ["pipe", "pipe", "inherit"] });
    // coil's end, said once: its exit status, or the signal that ended
    // it ('exit' fires once; whoever asks later gets the same answer)
    this.exited = new Promise((ok) => {
      this.proc.once("exit", (code, sig) => ok(code ?? sig));
      this.proc.once("error", (e) => ok(e.message));
    });
    this.proc.stdin.on("error", () => {});  // coil gone: line() says so
    this.it = readline.createInterface({ input: this.proc.stdout })
      [Symbol.asyncIterator]();
    this.lastId = 0;
  }

  send(msg) {
    this.proc.stdin.write(JSON.stringify(msg) + "\n");
  }

  // The next JSON line coil writes; CoilGone when it has ended.
  async line() {
    const { value, done } = await this.it.next();
    if (done)
      throw new CoilGone(`coil ended (exit status ${await this.exited})`);
    return JSON.parse(value);
  }

  // End coil: close its input, and if it has not ended in CLOSE_WAIT
  // (a cell still running), SIGTERM, then SIGKILL: no coil is left
  // running when the loop ends.
  async close() {
    this.proc.stdin.end();
    for (const sig of [null, "SIGTERM", "SIGKILL"]) {
      if (sig)
        this.proc.kill(sig);
      let timer;
      const late = new Promise((ok) => {
        timer = setTimeout(ok, CLOSE_WAIT, "late");
      });
      const ended = await Promise.race([this.exited.then(() => true),
                                        late.then(() => false)]);
      clearTimeout(timer);
      if (ended)
        return;
    }
  }
}

// coil --agent: a request a line, an answer a line (lines with "event"
// are a cell's stream events: skipped).
class AgentCoil extends CoilProcess {
  constructor(coil, coilOptions, workdir, timeout) {
    super(coil, "--agent", coilOptions, workdir, timeout);
  }

  async start() {}

  async request(req) {
    const id = ++this.lastId;
    this.send({ ...req, id });
    for (;;) {
      const answer = await this.line();
      if (answer.id === id && !("event" in answer))
        return answer;
    }
  }

  async call(tool, args) {
    const answer = await this.request({ ...args, op: OPS[tool] });
    let text = answerText(answer);
    const images = [];
    for (const d of answer.display ?? []) {
      if (d.type !== "image/png" || !d.path)
        continue;
      const data = readFigure(d.path, this.workdir);
      if (data === null) {
        text += `[figure ${d.path}: not attached]\n`;
        continue;
      }
      // fitImages() says whether it is attached
      images.push({ mime: "image/png", path: d.path,
                    data: data.toString("base64") });
    }
    return finish(args, answer, text, images, answer.status !== "ok",
                  this.timeout);
  }
}

// coil --mcp: JSON-RPC 2.0 a line; initialize, then tools/call.
class McpCoil extends CoilProcess {
  constructor(coil, coilOptions, workdir, timeout) {
    super(coil, "--mcp", coilOptions, workdir, timeout);
  }

  async start() {
    await this.rpc("initialize", {
      protocolVersion: "2025-06-18", capabilities: {},
      clientInfo: { name: "coil-loop", version: "1" },
    });
    this.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  }

  // The call's result; its JSON-RPC error as {error: message}.
  async rpc(method, params) {
    const id = ++this.lastId;
    this.send({ jsonrpc: "2.0", id, method, params });
    for (;;) {
      const msg = await this.line();
      if (msg.method === "notifications/message")
        say("coil says:", JSON.stringify(msg.params.data));
      if (msg.id === id && !("method" in msg))
        return "error" in msg ? { error: msg.error.message } : msg.result;
    }
  }

  async call(tool, args) {
    const res = await this.rpc("tools/call", { name: tool, arguments: args });
    if ("error" in res)
      return finish(args, {}, "error: " + res.error, [], true, this.timeout);
    const text = res.content.filter((c) => c.type === "text")
      .map((c) => c.text).join("");
    const images = res.content.filter((c) => c.type === "image")
      .map((c) => ({ mime: c.mimeType, data: c.data }));
    return finish(args, res.structuredContent ?? {}, text, images,
                  res.isError ?? false, this.timeout);
  }
}

// The result, with each image over the API's limit (a figure the loop
// read, or one in coil's MCP result) taken out and said in its text: the
// API would refuse the whole request (400), and end the run.  A figure
// the loop read has its path: said either way.
function fitImages(api, result) {
  const kept = [];
  for (const im of result.images) {
    const size = Buffer.byteLength(im.data, "base64");
    // Anthropic counts the base64 text, OpenAI the bytes
    const counted = api === "anthropic" ? im.data.length : size;
    const name = im.path ? `figure ${im.path}:` : "figure";
    if (counted > MAX_IMAGE[api]) {
      result.text += `\n[${name} not attached: ${size} bytes, over the ` +
                     "API's limit]";
      continue;
    }
    if (im.path)
      result.text += `\n[${name} attached]`;
    kept.push({ mime: im.mime, data: im.data });
  }
  result.images = kept;
  return result;
}

async function runTool(coil, name, args) {
  if (args === CUT)
    return { text: CUT_CALL, images: [], is_error: true };
  if (!(name in OPS))
    return { text: `unknown tool '${name}': the tools are ` +
             Object.keys(OPS).join(", "), images: [], is_error: true };
  if (args === null || typeof args !== "object" || Array.isArray(args))
    return { text: `the arguments of '${name}' are not a JSON object: ` +
             "call it again with one", images: [], is_error: true };
  return coil.call(name, args);
}

// ---- the model's API ----------------------------------------------------

async function post(url, headers, body) {
  let r;
  try {
    r = await fetch(url, {
      method: "POST", body: JSON.stringify(body),
      headers: { ...headers, "content-type": "application/json" },
      signal: AbortSignal.timeout(600_000),
    });
  } catch (e) {
    throw new Fatal(`cannot reach ${url}: ${e.cause?.message ?? e.message}`);
  }
  if (!r.ok)
    throw new Fatal(`${url} answered ${r.status}: ` +
                    (await r.text()).slice(0, 2000));
  return r.json();
}

function apiKey(name) {
  if (!process.env[name])
    throw new Fatal(`set ${name} (or choose the other API with --api)`);
  return process.env[name];
}

// Chat Completions.  A call's arguments are JSON in a string; each result
// is a "tool" message, which holds text only, so figures follow the
// results in a user message, as image_url data URLs.
class OpenAIChat {
  constructor(model, system, tools, maxTokens) {
    const base = process.env.OPENAI_BASE_URL || "https://api.openai.com/v1";
    this.url = base.replace(/\/+$/, "") + "/chat/completions";
    this.headers = { authorization: "Bearer " + apiKey("OPENAI_API_KEY") };
    this.model = model;
    this.tools = tools;
    this.maxTokens = maxTokens;  // undefined: the model's own limit
    this.messages = [{ role: "system", content: system }];
  }

  ask(task) {
    this.messages.push({ role: "user", content: task });
  }

  // The model's next turn: its text, its calls [[id, name, arguments, or
  // null when they are not JSON]], and how it stopped: null (as it meant
  // to), "cut" (at the token limit: its last call, or its text, is not
  // whole) or "refused" (a refusal, or the content filter).
  async turn() {
    const body = { model: this.model, messages: this.messages,
                   tools: this.tools };
    if (this.maxTokens !== undefined)
      body.max_completion_tokens = this.maxTokens;
    const reply = await post(this.url, this.headers, body);
    const choice = reply.choices[0], msg = choice.message;
    let stop = null;
    if (choice.finish_reason === "length")
      stop = "cut";
    if (choice.finish_reason === "content_filter" || msg.refusal)
      stop = "refused";
    const kept = { role: msg.role, content: msg.content ?? null };
    if (msg.tool_calls)
      kept.tool_calls = msg.tool_calls;
    this.messages.push(kept);
    const calls = (msg.tool_calls ?? []).map((c) => {
      let args;
      try {
        args = JSON.parse(c.function.arguments || "{}");
      } catch {
        args = null;
      }
      return [c.id, c.function.name, args];
    });
    if (stop === "cut" && calls.length)
      calls.at(-1)[2] = CUT;  // the cut fell in it: not whole
    return [msg.content || msg.refusal || "", calls, stop];
  }

  give(calls, results) {
    const figures = [];
    calls.forEach(([callId], i) => {
      this.messages.push({ role: "tool", tool_call_id: callId,
                           content: results[i].text });
      for (const im of results[i].images)
        figures.push({ type: "image_url", image_url: {
          url: `data:${im.mime};base64,${im.data}` } });
    });
    if (figures.length)
      this.messages.push({ role: "user", content: [
        { type: "text", text: "The figures of those calls:" }, ...figures] });
  }
}

// Messages API.  Results are tool_result blocks of one user message; a
// figure is an image block in its call's tool_result.
class AnthropicMessages {
  constructor(model, system, tools, maxTokens) {
    const base = process.env.ANTHROPIC_BASE_URL || "https://api.anthropic.com";
    this.url = base.replace(/\/+$/, "") + "/v1/messages";
    this.headers = { "x-api-key": apiKey("ANTHROPIC_API_KEY"),
                     "anthropic-version": "2023-06-01" };
    this.model = model;
    this.tools = tools;
    this.system = system;
    this.maxTokens = maxTokens ?? 4096;  // the API requires one
    this.messages = [];
  }

  ask(task) {
    this.messages.push({ role: "user", content: task });
  }

  // As OpenAIChat's turn(): text, calls, how it stopped.
  async turn() {
    const reply = await post(this.url, this.headers, {
      model: this.model, max_tokens: this.maxTokens, system: this.system,
      tools: this.tools, messages: this.messages,
    });
    this.messages.push({ role: "assistant", content: reply.content });
    const stop = { max_tokens: "cut", refusal: "refused" }[
      reply.stop_reason] ?? null;
    const text = reply.content.filter((b) => b.type === "text")
      .map((b) => b.text).join("");
    const calls = reply.content.filter((b) => b.type === "tool_use")
      .map((b) => [b.id, b.name, b.input]);
    if (stop === "cut" && reply.content.at(-1)?.type === "tool_use")
      calls.at(-1)[2] = CUT;  // the cut fell in the last call: not whole
    return [text, calls, stop];
  }

  give(calls, results) {
    this.messages.push({ role: "user", content: calls.map(([callId], i) => ({
      type: "tool_result", tool_use_id: callId,
      is_error: results[i].is_error,
      content: [{ type: "text", text: results[i].text },
                ...results[i].images.map((im) => ({ type: "image", source: {
                  type: "base64", media_type: im.mime, data: im.data } }))],
    })) });
  }
}

const APIS = { openai: OpenAIChat, anthropic: AnthropicMessages };

// ---- the loop -----------------------------------------------------------

const USAGE = `usage: coil-loop.mjs [--api openai|anthropic] [--model M]
       [--mcp] [--max-turns N] [--max-tokens N] [--timeout S (0: none)]
       [--workdir DIR] [--log FILE] TASK [-- COIL_OPTIONS...]`;

// Options, the task, and what follows "--": coil's own options.
function options(argv) {
  const cut = argv.includes("--") ? argv.indexOf("--") : argv.length;
  let parsed;
  try {
    parsed = parseArgs({ args: argv.slice(0, cut), allowPositionals: true,
      options: {
        api: { type: "string" }, model: { type: "string" },
        mcp: { type: "boolean", default: false },
        "max-turns": { type: "string", default: "20" },
        "max-tokens": { type: "string" },
        timeout: { type: "string", default: "30" },
        workdir: { type: "string", default: "." },
        log: { type: "string" }, help: { type: "boolean", short: "h" },
      } });
  } catch (e) {
    console.error(`${e.message}\n${USAGE}`);
    process.exit(2);
  }
  const { values: o, positionals } = parsed;
  if (o.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const maxTurns = Number(o["max-turns"]), timeout = Number(o.timeout);
  const maxTokens = o["max-tokens"] === undefined ? undefined
    : Number(o["max-tokens"]);
  // --timeout 0 is no limit, as in coil and coil-loop.py
  if (positionals.length !== 1 || (o.api && !(o.api in APIS)) ||
      !Number.isInteger(maxTurns) || !(timeout >= 0) ||
      !(maxTokens === undefined || Number.isInteger(maxTokens))) {
    console.error(USAGE);
    process.exit(2);
  }
  const api = o.api ?? (process.env.ANTHROPIC_API_KEY &&
                        !process.env.OPENAI_API_KEY ? "anthropic" : "openai");
  return { ...o, api, maxTurns, maxTokens, timeout, task: positionals[0],
           coilOptions: ["--workdir", o.workdir, "--timeout", String(timeout),
                         ...argv.slice(cut + 1)] };
}

async function main(argv) {
  const opts = options(argv);
  const coilBin = process.env.COIL || "coil";
  let chat, system, coil = null, stopped = null;
  try {
    const tools = JSON.parse(coilPrints(coilBin, "--tool-schema", opts.api,
                                        ...opts.coilOptions));
    system = coilPrints(coilBin, "--system-prompt", ...opts.coilOptions);
    chat = new APIS[opts.api](opts.model ?? MODELS[opts.api], system, tools,
                              opts.maxTokens);
    chat.ask(opts.task);
    coil = new (opts.mcp ? McpCoil : AgentCoil)(
      coilBin, opts.coilOptions, opts.workdir, opts.timeout);
    // SIGTERM or SIGINT to the loop: close coil; the call waiting on it
    // then ends (CoilGone), and the loop ends as on an error, with its
    // --log written
    const stop = (sig) => {
      stopped = sig;
      say(`stopped by ${sig}: closing coil`);
      coil.close();
    };
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
    await coil.start();
    for (let turn = 0; turn < opts.maxTurns; turn++) {
      const [text, calls, stop] = await chat.turn();
      if (text)
        console.log(text);
      if (stop === "refused") {
        say("the model refused, or the API's content filter stopped its " +
            "answer");
        return EXIT_REFUSED;
      }
      if (!calls.length) {
        if (stop !== "cut")
          return 0;
        say("the answer was cut at the token limit: give a larger " +
            "--max-tokens");
        return EXIT_CUT;
      }
      const results = [];
      for (const [, name, args] of calls) {
        if (args === CUT)
          say(`${name}: cut at the token limit, not run`);
        else
          say(`${name} ${JSON.stringify(args).slice(0, 200)}`);
        results.push(fitImages(opts.api, await runTool(coil, name, args)));
      }
      chat.give(calls, results);
    }
    say(`stopped after ${opts.maxTurns} turns (--max-turns): the model ` +
        "still had calls to make");
    return 3;
  } catch (e) {
    if (!(e instanceof Fatal || e instanceof CoilGone))
      throw e;
    if (stopped)
      return 128 + os.constants.signals[stopped];
    say(e.message);
    return 1;
  } finally {
    if (coil !== null)
      await coil.close();
    if (opts.log && chat)
      fs.writeFileSync(opts.log, JSON.stringify({
        api: opts.api, model: chat.model, system, messages: chat.messages,
      }, null, 1));
  }
}

process.exitCode = await main(process.argv.slice(2));
