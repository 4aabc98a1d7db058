/*
 * options-replay.c - what a transcript keeps of coil's options, and what
 * a replay takes back from it (options.h: options_json, options_replay).
 * It reads options.c's table (options-int.h): a row's setter says what
 * kind of value it holds, and a recorded value goes back through that
 * same setter, with the command line's checks; and whether the replay's
 * own options go together (options_replay_check).  Runs in the
 * supervisor.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options-int.h"
#include "util.h"

/* A whole number field of e, whatever its width. */
static long long
opt_load(const struct coil_opts *o, const struct options_entry *e)
{
	const char *p = (const char *)o + e->off;
	long long v = 0;
	int i;

	if (e->width == sizeof i) {
		memcpy(&i, p, sizeof i);
		return i;
	}
	memcpy(&v, p, sizeof v);
	return v;
}

/* A list of strings as one comma-separated one, or an array (dirs). */
static json_t *
opt_list_json(const char *const *list, size_t n, bool commas)
{
	json_t *a = json_array();
	struct buf b;
	size_t i;

	if (!commas) {
		for (i = 0; i < n; i++)
			json_array_append_new(a, json_string(list[i]));
		return a;
	}
	json_decref(a);
	buf_init(&b);
	for (i = 0; i < n; i++)
		buf_printf(&b, "%s%s", i ? "," : "", list[i]);
	a = json_string(b.p);
	buf_free(&b);
	return a;
}

/* Option e's value in o as its command line argument (true: a flag
 * that is on); NULL when it is off or empty. */
static json_t *
opt_value_json(const struct coil_opts *o, const struct options_entry *e)
{
	char s[64];

	if (e->set == opt_seconds) {
		if (*AT(o, e, const double) < 0)
			return NULL;	/* unset: the front end's default */
		snprintf(s, sizeof s, "%g", *AT(o, e, const double));
		return json_string(s);
	}
	if (e->set == opt_size || e->set == opt_count) {
		if (opt_load(o, e) < e->min)
			return NULL;	/* unset: --checkpoint-memory's 0 */
		snprintf(s, sizeof s, "%lld", opt_load(o, e));
		return json_string(s);
	}
	if (e->set == opt_flag)
		return *AT(o, e, const bool) ? json_true() : NULL;
	if (e->set == opt_profile)
		return json_string(sandbox_profile_name(o->sbx.profile));
	if (e->set == opt_policy)
		return json_string(ckpt_policy_names[o->checkpoint_policy]);
	if (e->set == opt_redo)
		return json_string(o->no_redo ? "none" : "safe");
	if (e->set == opt_preload && o->npreload > 0)
		return opt_list_json(o->preload, o->npreload, true);
	if (e->set == opt_allow_import && o->nallow_import > 0)
		return opt_list_json(o->allow_import, o->nallow_import, true);
	if (e->set == opt_allow_read && o->sbx.n_allow_read > 0)
		return opt_list_json(o->sbx.allow_read, o->sbx.n_allow_read,
		    false);
	if (e->set == opt_allow_write && o->sbx.n_allow_write > 0)
		return opt_list_json(o->sbx.allow_write, o->sbx.n_allow_write,
		    false);
	return NULL;
}

json_t *
options_json(const struct coil_opts *o)
{
	json_t *all = json_object(), *v;
	size_t i;

	for (i = 0; i < options_count; i++)
		if ((options_table[i].flags & OPT_SESSION) &&
		    (v = opt_value_json(o, &options_table[i])) != NULL)
			json_object_set_new(all, options_table[i].name, v);
	return all;
}

/* One recorded value through e's own setter: the same checks as on the
 * command line. */
static int
opt_replay_one(struct coil_opts *o, const struct options_entry *e,
    json_t *v, char *err, size_t errlen)
{
	size_t i;

	if (json_is_true(v) && e->arg == NULL)
		return e->set(o, e, NULL, err, errlen);
	if (json_is_string(v) && e->arg != NULL)
		return e->set(o, e, json_string_value(v), err, errlen);
	if (json_is_array(v) && e->arg != NULL) {
		for (i = 0; i < json_array_size(v); i++)
			if (!json_is_string(json_array_get(v, i)) ||
			    e->set(o, e, json_string_value(json_array_get(v, i)),
			    err, errlen) != 0)
				return -1;
		return 0;
	}
	return err_set(err, errlen, "not a value of --%s", e->name);
}

/* v as words of a command line ("--allow-write /a --allow-write /b"),
 * each argument quoted for a shell when it needs it: what a person
 * would type to get it. */
static void
opt_words(struct buf *b, const struct options_entry *e, json_t *v)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,:/@%";
	json_t *one;
	const char *s, *p;
	size_t i, n = json_is_array(v) ? json_array_size(v) : 1;

	for (i = 0; i < n; i++) {
		one = json_is_array(v) ? json_array_get(v, i) : v;
		buf_printf(b, "%s--%s", i ? " " : "", e->name);
		if (e->arg == NULL)
			continue;
		if ((s = json_string_value(one)) == NULL) {
			buf_printf(b, " (a value that is not a string)");
			continue;
		}
		if (*s != '\0' && strspn(s, plain) == strlen(s)) {
			buf_printf(b, " %s", s);
			continue;
		}
		buf_addstr(b, " '");
		for (p = s; *p != '\0'; p++)
			if (*p == '\'')
				buf_addstr(b, "'\\''");
			else
				buf_add(b, p, 1);
		buf_addstr(b, "'");
	}
}

/* Say that the recording's e (v) was left out, what ran instead, and
 * how to get it. */
static void
opt_dropped(struct buf *warnings, const struct options_entry *e, json_t *v,
    const char *instead)
{
	struct buf w;

	buf_init(&w);
	opt_words(&w, e, v);
	buf_printf(warnings, "the recording ran with %s: replayed %s; pass "
	    "%s yourself to replay it so\n", w.p, instead, w.p);
	buf_free(&w);
}

/*
 * A recorded option that holds cells in (OPT_CONTAIN): a transcript is a
 * file a cell may have written, so what it asks is taken only where it
 * makes the session stricter than it is: a stricter profile, a lower
 * limit.  A directory to read or write and the network only ever widen
 * what cells reach, and are never taken.  What is left out is said.
 */
static void
opt_replay_contained(struct coil_opts *o, const struct options_entry *e,
    json_t *v, struct buf *warnings)
{
	struct coil_opts tmp;
	char err[512], now[64];

	/* --sandbox none was given: none of these does anything there. */
	if (o->sbx.profile == SANDBOX_NONE)
		return;
	/* (--allow-net is the one flag among them) */
	if (e->set == opt_allow_read || e->set == opt_allow_write ||
	    e->set == opt_flag) {
		opt_dropped(warnings, e, v, "without it");
		return;
	}
	/* A profile, a size or a count: the setter checks it and stores it
	 * in a copy, which shares o's lists but allocates nothing. */
	tmp = *o;
	if (opt_replay_one(&tmp, e, v, err, sizeof err) != 0) {
		buf_printf(warnings, "the recording's --%s: %s: replayed "
		    "without it\n", e->name, err);
		return;
	}
	if (e->set == opt_profile) {
		/* none < standard < strict: the stricter of the two */
		if (tmp.sbx.profile >= o->sbx.profile) {
			o->sbx.profile = tmp.sbx.profile;
			return;
		}
		snprintf(now, sizeof now, "under %s",
		    sandbox_profile_name(o->sbx.profile));
		opt_dropped(warnings, e, v, now);
		return;
	}
	/* A limit: below its least value, none at all (no checkpoint cap) */
	if (opt_load(o, e) < e->min || opt_load(&tmp, e) <= opt_load(o, e)) {
		opt_store(o, e, opt_load(&tmp, e));
		return;
	}
	snprintf(now, sizeof now, "with --%s %lld", e->name, opt_load(o, e));
	opt_dropped(warnings, e, v, now);
}

void
options_replay(struct coil_opts *o, json_t *recorded, struct buf *warnings)
{
	const struct options_entry *e;
	const char *name;
	json_t *v;
	size_t i;
	char err[512];

	json_object_foreach(recorded, name, v) {
		for (i = 0; i < options_count; i++)
			if (strcmp(options_table[i].name, name) == 0)
				break;
		e = i < options_count ? &options_table[i] : NULL;
		if (e == NULL || !(e->flags & OPT_SESSION)) {
			buf_printf(warnings, "the recording used --%s, which "
			    "this coil lacks: replayed without it\n", name);
			continue;
		}
		if (o->given & (1ULL << i))
			continue;	/* the command line's wins */
		if (e->set == opt_seconds && json_is_string(v) &&
		    strtod(json_string_value(v), NULL) < 0)
			continue;	/* unset, as coil 0.1.0 recorded it */
		if (e->flags & OPT_CONTAIN)
			opt_replay_contained(o, e, v, warnings);
		else if (opt_replay_one(o, e, v, err, sizeof err) != 0)
			buf_printf(warnings, "the recording's --%s: %s: "
			    "replayed without it\n", name, err);
	}
	o->sbx.workdir = o->workdir;
}

/* Whether the option called name was on the command line. */
static bool
opt_given(const struct coil_opts *o, const char *name)
{
	size_t i;

	for (i = 0; i < options_count; i++)
		if (strcmp(options_table[i].name, name) == 0)
			return (o->given & (1ULL << i)) != 0;
	return false;
}

/*
 * --from makes a replay the start of a live session (the front end the
 * other options choose takes it over), unless --check asks for the two
 * continuations compared, which needs --then; a replay without --from
 * is a front end of its own, as before.  --resume rebuilds a session
 * from a transcript and serves it: not a replay, nor an attach.
 */
int
options_replay_check(const struct coil_opts *o, char *err, size_t errlen)
{
	bool from = opt_given(o, "from");
	const char *mode = o->mode == MODE_MCP ? "mcp" : "agent";

	if (o->resume_all && o->resume == NULL)
		return err_set(err, errlen, "--resume-all runs every cell of "
		    "a resumed transcript again: use it with --resume FILE");
	if (o->resume != NULL && (o->replay != NULL || o->attach != NULL))
		return err_set(err, errlen, "--resume FILE rebuilds a session "
		    "and serves it live: it goes with neither --replay nor "
		    "--attach");
	if (from && o->replay == NULL)
		return err_set(err, errlen, "--from N picks up a replay at its "
		    "Nth cell: use it with --replay FILE");
	if (o->replay_then != NULL && !from)
		return err_set(err, errlen, "--then FILE2 runs its cells on a "
		    "branch forked at --from N: give --from N too (FILE2 holds "
		    "only the cells to run after cell N)");
	if (from && o->replay_from == 0)
		return err_set(err, errlen, "--from 0 would fork before any "
		    "cell of '%s': give --from 1 or more (without --from, "
		    "coil --replay runs the whole file)", o->replay);
	if (from && o->check && o->replay_then == NULL)
		return err_set(err, errlen, "--check with --from compares two "
		    "continuations: give --then FILE2 too, or leave out --from "
		    "to check the whole file");
	if (o->replay != NULL && (o->mode == MODE_AGENT ||
	    o->mode == MODE_MCP) && (!from || o->check))
		return err_set(err, errlen, "--replay%s is a front end of its "
		    "own: leave out --%s (--from N without --check hands the "
		    "session to --%s after cell N)", from ? " --check" : "",
		    mode, mode);
	return 0;
}
