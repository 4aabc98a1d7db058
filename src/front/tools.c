/*
 * tools.c - coil's tools for each model API, and the system text (see
 * tools.h).
 *
 * Each API's definitions are MCP's tools/list (mcp-tools.c) reshaped:
 * the name, the description and the input schema are the same bytes in
 * all three, so a loop against OpenAI's or Anthropic's API calls the
 * same tools with the same arguments as an MCP client, and a tool's
 * arguments are the fields of its agent op.
 *
 * The output schemas say what the agent answer of each op carries
 * (response.c writes it, the session's files fill it), as --brief
 * writes it: null, "", [] and {} members are left out, so no top-level
 * member is required but "status".  Members are given as JSON text, a
 * table a part: those of every answer, and each op's own.  Members an
 * answer may carry beyond these (a newer coil's) are allowed.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp-int.h"
#include "options.h"
#include "tools.h"
#include "util.h"

/* ---- what an answer carries ------------------------------------------ */

/* The members every answer may carry: its status, the error when the
 * status is not ok, the warnings, the branch that served it, and
 * "restored" after the worker died under it or before it. */
static const char tools_common[] = "{"
    "\"status\": {\"enum\": [\"ok\", \"error\", \"incomplete\", "
    "\"timeout\", \"interrupted\", \"crashed\", \"invalid\"], "
    "\"description\": \"ok; error: the code raised; incomplete: the code "
    "needs more lines, nothing ran; timeout and interrupted: stopped; "
    "crashed: its process died; invalid: the arguments were refused, "
    "nothing ran\"},"
    "\"error\": {\"type\": \"object\", \"description\": \"why the status "
    "is not ok\", \"properties\": {"
    "\"type\": {\"type\": \"string\"}, \"message\": {\"type\": "
    "\"string\"}, \"traceback\": {\"type\": \"string\"},"
    "\"line\": {\"type\": \"integer\", \"minimum\": 1},"
    "\"column\": {\"type\": \"integer\", \"minimum\": 1},"
    "\"hint\": {\"type\": \"string\", \"description\": \"the likely "
    "next move\"}}, \"required\": [\"type\", \"message\"]},"
    "\"warnings\": {\"type\": \"array\", \"items\": {\"type\": "
    "\"string\"}},"
    "\"session\": {\"type\": \"string\", \"description\": \"the branch "
    "that served the call (absent: main)\"},"
    "\"restored\": {\"type\": \"object\", \"description\": \"the "
    "worker died (a crash, or killed after its timeout) and the "
    "namespace was restored: absent when it is as the last cell left "
    "it\", \"properties\": {"
    "\"cell\": {\"type\": [\"integer\", \"null\"], \"description\": "
    "\"the cell whose state it is back at (null: a fresh "
    "interpreter)\"},"
    "\"threads_lost\": {\"type\": \"integer\", \"minimum\": 0},"
    "\"redone\": {\"type\": \"array\", \"items\": {\"type\": "
    "\"integer\"}, \"description\": \"lost cells run again, that "
    "answered as before\"},"
    "\"differs\": {\"type\": \"array\", \"description\": \"lost cells "
    "run again, that answered otherwise\", \"items\": {\"type\": "
    "\"object\", \"properties\": {\"cell\": {\"type\": \"integer\"}, "
    "\"first\": {\"type\": \"object\", \"description\": \"the "
    "first line that differs\", \"properties\": {\"field\": "
    "{\"type\": \"string\"}, \"was\": {\"type\": \"string\"}, "
    "\"now\": {\"type\": \"string\"}}}}}},"
    "\"lost\": {\"type\": \"array\", \"items\": {\"type\": "
    "\"integer\"}, \"description\": \"cells whose effects are gone: "
    "run them again if they are needed\"},"
    "\"lost_why\": {\"type\": \"array\", \"items\": {\"type\": "
    "\"object\", \"properties\": {\"cell\": {\"type\": \"integer\"}, "
    "\"why\": {\"type\": \"string\"}}}}}}"
    "}";

/* A whole number of bytes, milliseconds, cells. */
#define T_INT "{\"type\": \"integer\"}"
#define T_COUNT "{\"type\": \"integer\", \"minimum\": 0}"
#define T_NUM "{\"type\": \"number\"}"
#define T_STR "{\"type\": \"string\"}"
#define T_BOOL "{\"type\": \"boolean\"}"
#define T_INTS "{\"type\": \"array\", \"items\": " T_INT "}"
#define T_INT_NULL "{\"type\": [\"integer\", \"null\"]}"
#define T_MEMORY "{\"type\": \"object\", \"properties\": {\"private\": " \
	T_COUNT ", \"shared\": " T_COUNT "}}"

/* The session's totals (vars): cells, time and CPU summed, top peak. */
#define TOOLS_TOTALS "\"totals\": {\"type\": \"object\", \"properties\": {" \
	"\"cells\": " T_COUNT ", \"duration_ms\": " T_NUM ", \"cpu_ms\": " \
	T_NUM ", \"memory_peak\": " T_INT_NULL "}}"

/* A cell's answer: its streams, result, figures and cost, what it
 * touched, what was cut, and what threads printed between cells. */
static const char tools_exec[] = "{"
    "\"cell\": " T_INT ", \"output\": " T_STR ", \"stderr\": " T_STR ","
    "\"result\": {\"type\": \"string\", \"description\": \"the repr of "
    "the last expression's value (Out[cell])\"},"
    "\"display\": {\"type\": \"array\", \"items\": {\"type\": \"object\", "
    "\"properties\": {\"type\": {\"type\": \"string\", \"description\": "
    "\"a MIME type\"}, \"path\": {\"type\": \"string\", \"description\": "
    "\"a figure's file\"}, \"text\": " T_STR ", \"note\": " T_STR ", "
    "\"bytes\": " T_COUNT ", \"width\": " T_INT ", \"height\": " T_INT
    "}}},"
    "\"duration_ms\": " T_NUM ", \"cpu_ms\": " T_NUM ","
    "\"memory_peak\": " T_COUNT ","
    "\"effects\": {\"type\": \"array\", \"description\": \"what the cell "
    "did outside Python\", \"items\": {\"type\": \"object\", "
    "\"properties\": {\"kind\": {\"enum\": [\"create\", \"write\", "
    "\"delete\", \"rename\", \"process\", \"connect\"]}, \"path\": " T_STR
    ", \"to\": " T_STR ", \"cmd\": " T_STR ", \"denied\": {\"const\": "
    "true}}, \"required\": [\"kind\"]}},"
    "\"effects_more\": " T_COUNT ","
    "\"truncated\": {\"type\": \"integer\", \"minimum\": 0, "
    "\"description\": \"bytes of text left out, each cut marked\"},"
    "\"cut\": {\"type\": \"object\", \"additionalProperties\": {\"type\": "
    "\"object\", \"properties\": {\"lines\": " T_COUNT ", \"bytes\": "
    T_COUNT "}}},"
    "\"background\": {\"type\": \"object\", \"description\": \"what "
    "threads printed between cells\", \"properties\": {\"output\": "
    T_STR ", \"stderr\": " T_STR "}}"
    "}";

static const char tools_vars[] = "{"
    "\"vars\": {\"type\": \"array\", \"items\": {\"type\": \"object\", "
    "\"properties\": {\"name\": " T_STR ", \"type\": " T_STR ", \"repr\": "
    T_STR ", \"size\": " T_COUNT ", \"shape\": " T_INTS ", \"dtype\": "
    T_STR ", \"len\": " T_COUNT ", \"signature\": " T_STR "}}},"
    "\"vars_more\": " T_COUNT ", " TOOLS_TOTALS
    "}";

static const char tools_inspect[] = "{"
    "\"name\": " T_STR ", \"type\": " T_STR ", \"repr\": " T_STR ","
    "\"doc\": " T_STR ", \"signature\": " T_STR ", \"file\": " T_STR
    "}";

static const char tools_snapshot[] = "{"
    "\"name\": " T_STR ", \"cell\": " T_INT ", \"replaced\": {\"type\": "
    "\"integer\", \"description\": \"the cell of the snapshot of that "
    "name it replaced\"}, \"waited_for_cell\": " T_INT
    "}";

static const char tools_snapshots[] = "{"
    "\"checkpoints\": {\"type\": \"array\", \"items\": {\"type\": "
    "\"object\", \"properties\": {\"name\": {\"type\": [\"string\", "
    "\"null\"]}, \"cell\": " T_INT ", \"kind\": " T_STR ", \"age_s\": "
    T_NUM ", \"private\": " T_INT_NULL ", \"pss\": " T_INT_NULL ", "
    "\"threads\": " T_COUNT ", \"pid\": " T_INT ", \"fork_ms\": " T_NUM
    ", \"current\": " T_BOOL "}}},"
    "\"count\": " T_COUNT ", \"memory\": " T_COUNT ", \"max_auto\": "
    T_COUNT ", \"cell\": " T_INT ","
    "\"unkept\": {\"type\": \"array\", \"items\": " T_INT ", "
    "\"description\": \"the cells a crash now would lose\"},"
    "\"policy\": " T_STR ", \"cost_ms\": " T_NUM
    "}";

static const char tools_rollback[] = "{"
    "\"cell\": " T_INT ", \"name\": " T_STR ", \"from\": " T_STR ","
    "\"rolled_back\": " T_INTS ", \"redone\": " T_INTS ", \"note\": "
    T_STR ", \"threads_lost\": " T_COUNT ", \"waited_for_cell\": " T_INT
    "}";

static const char tools_reset[] = "{\"from\": " T_STR "}";

static const char tools_fork[] = "{"
    "\"sessions\": {\"type\": \"array\", \"items\": " T_STR ", "
    "\"description\": \"the branches made\"},"
    "\"parent\": " T_STR ", \"cell\": " T_INT ", \"from\": " T_STR ","
    "\"files\": " T_STR ", \"fork_ms\": " T_NUM ", \"note\": " T_STR
    "}";

static const char tools_sessions[] = "{"
    "\"sessions\": {\"type\": \"array\", \"items\": {\"type\": "
    "\"object\", \"properties\": {\"name\": " T_STR ", \"parent\": "
    "{\"type\": [\"string\", \"null\"]}, \"from_cell\": " T_INT_NULL ", "
    "\"cell\": " T_INT ", \"state\": {\"enum\": [\"idle\", \"running\", "
    "\"busy\", \"starting\"]}, \"default\": " T_BOOL ", \"files\": " T_STR
    ", \"memory\": {\"type\": [\"object\", \"null\"], \"properties\": "
    "{\"private\": " T_COUNT ", \"shared\": " T_COUNT "}}, "
    "\"checkpoints\": " T_COUNT ", \"isolated\": {\"type\": [\"boolean\", "
    "\"string\"]}}}},"
    "\"memory\": " T_MEMORY ", \"max\": " T_COUNT
    "}";

static const char tools_close[] = "{\"closed\": " T_STR ", \"cell\": "
    T_INT "}";

static const char tools_adopt[] = "{\"session\": " T_STR ", \"was\": "
    T_STR ", \"cell\": " T_INT "}";

static const struct {
	enum op op;
	const char *props;
} tools_answers[] = {
	{ OP_EXEC, tools_exec }, { OP_VARS, tools_vars },
	{ OP_INSPECT, tools_inspect }, { OP_SNAPSHOT, tools_snapshot },
	{ OP_SNAPSHOTS, tools_snapshots }, { OP_ROLLBACK, tools_rollback },
	{ OP_RESET, tools_reset }, { OP_FORK, tools_fork },
	{ OP_SESSIONS, tools_sessions }, { OP_CLOSE, tools_close },
	{ OP_ADOPT, tools_adopt },
};

/* One of the tables above, parsed: they are constants, so a table that
 * is not JSON is a bug (tests/mcp/output.py reads them all). */
static json_t *
tools_props(const char *text)
{
	json_error_t je;
	json_t *v = json_loads(text, 0, &je);

	if (!json_is_object(v))
		fatal("tools.c: a table of members is not JSON: %s (column "
		    "%d)", je.text, je.column);
	return v;
}

json_t *
tools_output_schema(enum op op)
{
	json_t *props = tools_props(tools_common), *own;
	size_t i;

	for (i = 0; i < nitems(tools_answers); i++)
		if (tools_answers[i].op == op) {
			own = tools_props(tools_answers[i].props);
			/* an op's member over the common one of its name
			 * (adopt's "session" is the one adopted) */
			json_object_update(props, own);
			json_decref(own);
		}
	return json_pack("{s:s, s:s, s:o, s:[s]}", "type", "object",
	    "description", "the agent protocol's answer (coil(1), AGENT "
	    "PROTOCOL), as --brief writes it: empty members left out",
	    "properties", props, "required", "status");
}

/* ---- the system text ---------------------------------------------- */

/* A size in the largest unit that says it exactly: "4 GiB", "1536 KiB",
 * "1000 bytes". */
static void
tools_size(struct buf *b, unsigned long long n)
{
	if (n >= 1ULL << 30 && n % (1ULL << 30) == 0)
		buf_printf(b, "%llu GiB", n >> 30);
	else if (n >= 1ULL << 20 && n % (1ULL << 20) == 0)
		buf_printf(b, "%llu MiB", n >> 20);
	else if (n >= 1ULL << 10 && n % (1ULL << 10) == 0)
		buf_printf(b, "%llu KiB", n >> 10);
	else
		buf_printf(b, "%llu bytes", n);
}

/* The limits the options set, as sentences. */
static void
tools_limits(struct buf *b, const struct coil_opts *o)
{
	double t = o->timeout < 0 ? OPTS_TIMEOUT : o->timeout;

	if (t == 0)
		buf_addstr(b, "a cell has no time limit unless the call gives "
		    "it a timeout. ");
	else
		buf_printf(b, "a cell is stopped after %g s unless the call "
		    "gives another timeout (at most a day). ", t);
	buf_printf(b, "An answer keeps %zu bytes of text in all (a call's "
	    "max_output changes it for that cell): a longer one is cut in "
	    "the middle, marked, and \"truncated\" counts the bytes left "
	    "out. ", o->max_output);
	if (o->sbx.profile == SANDBOX_NONE) {
		buf_addstr(b, "Cells run without a sandbox, with the user's "
		    "rights, in the work directory (their current "
		    "directory). ");
	} else {
		buf_printf(b, "Cells run in a sandbox: they may write in the "
		    "work directory (their current directory) and a private "
		    "temporary directory ($TMPDIR) and nowhere else the user "
		    "has not allowed, use at most ");
		tools_size(b, o->sbx.memory);
		buf_printf(b, " of memory, and %s the network. ",
		    o->sbx.allow_net && o->sbx.profile != SANDBOX_STRICT ?
		    "may use" : "cannot reach");
		if (o->sbx.profile == SANDBOX_STRICT)
			buf_addstr(b, "They cannot start processes or programs "
			    "(no subprocess, no !command, no %pip), and read "
			    "only Python's own files and the work directory. ");
	}
	buf_addstr(b, "input() gets end of file: pass data in the code.");
}

char *
tools_system_text(const struct coil_opts *opts)
{
	struct buf b;
	size_t i;

	buf_init(&b);
	buf_addstr(&b, "You work in one persistent Python session (coil), "
	    "which a person may share: what run_python defines (variables, "
	    "imports, functions) stays for the next call, and the value of "
	    "a call's last expression comes back as Out[N].\n\nThe tools "
	    "(each is an op of coil's agent protocol, and takes its "
	    "fields):\n");
	for (i = 0; i < mcp_ntools; i++)
		buf_printf(&b, "- %s: %s\n", mcp_tools[i].name,
		    request_ops[mcp_tools[i].op].usage);
	buf_addstr(&b, "A call goes to the default session (main, until "
	    "adopt_session) unless its \"session\" argument names a "
	    "branch that fork made.\n\nLimits: ");
	tools_limits(&b, opts);
	buf_addstr(&b, "\n\nAn answer's \"status\" is ok, error (the code "
	    "raised: the traceback is in \"error\"), incomplete, timeout, "
	    "interrupted, crashed or invalid (the arguments were refused; "
	    "nothing ran).\n\nReading \"restored\": when a cell crashes, "
	    "runs out of memory or is killed after its timeout, its process "
	    "dies and the namespace is restored from the newest checkpoint. "
	    "The answer then has \"restored\": \"cell\" is the cell whose "
	    "state the namespace is back at (null: a fresh interpreter, "
	    "nothing kept), \"redone\" lists the later cells that were run "
	    "again and answered as before, \"differs\" those run again that "
	    "answered otherwise (a clock, a random number), and \"lost\" "
	    "the cells whose effects are gone (\"lost_why\" says why each "
	    "was not run again): run them again if you need what they "
	    "made. The cell that died is never run again, and no thread "
	    "survives a restore (\"threads_lost\" counts those that ran "
	    "when the checkpoint was taken). If the process died between "
	    "calls, the next answer carries \"restored\" and a warning. No "
	    "\"restored\" means the namespace is as the last cell left it. "
	    "Files written and processes started are not rolled back.\n\n"
	    "snapshot and rollback keep and restore the namespace by name "
	    "or cell; reset starts afresh; fork branches the session into "
	    "independent copies in milliseconds, to try several ways from "
	    "one state, and adopt_session keeps the one that worked.");
	return buf_take(&b);
}

/* ---- each API's definitions ------------------------------------------ */

/* Chat Completions' function tools (openai's ChatCompletionTool). */
static json_t *
tools_openai(json_t *t)
{
	return json_pack("{s:s, s:{s:O, s:O, s:O}}", "type", "function",
	    "function", "name", json_object_get(t, "name"), "description",
	    json_object_get(t, "description"), "parameters",
	    json_object_get(t, "inputSchema"));
}

/* The Messages API's tools (@anthropic-ai/sdk's Tool). */
static json_t *
tools_anthropic(json_t *t)
{
	return json_pack("{s:O, s:O, s:O}", "name", json_object_get(t,
	    "name"), "description", json_object_get(t, "description"),
	    "input_schema", json_object_get(t, "inputSchema"));
}

static const struct {
	const char *name;
	json_t *(*reshape)(json_t *);	/* NULL: MCP's own */
} tools_apis[] = {
	{ "openai", tools_openai },
	{ "anthropic", tools_anthropic },
	{ "mcp", NULL },
};

json_t *
tools_for(const char *api, const struct coil_opts *opts)
{
	json_t *mcp, *out, *t;
	size_t i, k;

	for (k = 0; k < nitems(tools_apis); k++)
		if (strcmp(tools_apis[k].name, api) == 0)
			break;
	if (k == nitems(tools_apis))
		return NULL;
	mcp = mcp_tool_list(opts);
	if (tools_apis[k].reshape == NULL)
		return mcp;
	out = json_array();
	json_array_foreach(mcp, i, t)
		json_array_append_new(out, tools_apis[k].reshape(t));
	json_decref(mcp);
	return out;
}

int
tools_main(const struct coil_opts *opts)
{
	json_t *defs = NULL;
	char *text = NULL;
	int rc;

	if (opts->system_prompt && opts->tool_schema != NULL)
		return options_bad("--tool-schema and --system-prompt each "
		    "print one thing: give one");
	if (opts->tool_schema != NULL &&
	    (defs = tools_for(opts->tool_schema, opts)) == NULL)
		return options_bad("unknown API '%s' for --tool-schema "
		    "(openai, anthropic or mcp)", opts->tool_schema);
	if (defs != NULL) {
		rc = json_dumpf(defs, stdout, JSON_INDENT(2));
		json_decref(defs);
		if (rc == 0)
			putchar('\n');
	} else {
		text = tools_system_text(opts);
		printf("%s\n", text);
		free(text);
	}
	if (fflush(stdout) == EOF || ferror(stdout)) {
		coil_error("cannot write to standard output");
		return 1;
	}
	return 0;
}
