/*
 * options-venv.c - the virtualenv cells use (--venv DIR, else
 * $VIRTUAL_ENV unless --no-venv): found, held and checked once, at
 * start, before any cell runs.  Supervisor only.
 *
 * A venv is often .venv in the work dir, which cells write: so its dir
 * is walked as hostfs walks every path of the user's (no link followed
 * where cells may write) and held open from then on.  pyvenv.cfg is read
 * through that descriptor now, and never again: the sandbox binds the
 * held dir (sandbox.h: venv_fd), and only the sandboxed worker reads
 * the venv's files after this (its site-packages and .pth files,
 * worker.py).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "hostfs.h"
#include "options.h"
#include "util.h"

/* pyvenv.cfg is a few lines; more than this is no venv's */
#define VENV_CFG_MAX 65536

/* What pyvenv.cfg says of the venv. */
struct venv_cfg {
	char version[32];	/* "3.11": version_info, else version; "" */
	bool system_site;	/* include-system-site-packages = true,
				   or no such line (site.py's default) */
};

/* s without its blanks at both ends, in place. */
static char *
venv_trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* "3.11.2", "3.11.2.final.0": the "3.11" of it into out, or "". */
static void
venv_major_minor(const char *v, char *out, size_t len)
{
	const char *dot = strchr(v, '.');
	size_t n;

	out[0] = '\0';
	if (dot == NULL)
		return;
	n = strspn(dot + 1, "0123456789");
	if (n == 0 || dot - v + 1 + n >= len)
		return;
	snprintf(out, len, "%.*s", (int)(dot - v + 1 + n), v);
}

/* The key = value lines (site.py's reading: the first '=' splits, keys
 * in any case). */
static void
venv_parse(char *text, struct venv_cfg *cfg)
{
	char *line, *save = NULL, *eq, *key, *val, info[32] = "";

	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if ((eq = strchr(line, '=')) == NULL)
			continue;
		*eq = '\0';
		key = venv_trim(line);
		val = venv_trim(eq + 1);
		if (strcasecmp(key, "include-system-site-packages") == 0)
			cfg->system_site = strcasecmp(val, "true") == 0;
		else if (strcasecmp(key, "version_info") == 0)
			venv_major_minor(val, info, sizeof info);
		else if (strcasecmp(key, "version") == 0 &&
		    cfg->version[0] == '\0')
			venv_major_minor(val, cfg->version,
			    sizeof cfg->version);
	}
	if (info[0] != '\0')
		snprintf(cfg->version, sizeof cfg->version, "%s", info);
}

/* pyvenv.cfg in the held dir d, read and parsed: 0, or -1 with err. */
static int
venv_read_cfg(const struct hostfs_dir *d, struct venv_cfg *cfg, char *err,
    size_t errlen)
{
	char *text = xmalloc(VENV_CFG_MAX + 1);
	size_t n = 0;
	ssize_t got;
	int fd, rc = -1;

	/* fs(walked): in the venv's dir, held since the start */
	fd = hostfs_open(d, "pyvenv.cfg", HOSTFS_READ, err, errlen);
	if (fd == -1)
		goto out;
	while (n < VENV_CFG_MAX && (got = read(fd, text + n,
	    VENV_CFG_MAX - n)) != 0) {
		if (got == -1 && errno == EINTR)
			continue;
		if (got == -1) {
			err_set(err, errlen, "%s", strerror(errno));
			goto out;
		}
		n += (size_t)got;
	}
	text[n] = '\0';
	venv_parse(text, cfg);
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	free(text);
	return rc;
}

/* Whether path is dir or lies beneath it (both real paths). */
static bool
venv_beneath(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strcmp(dir, "/") == 0 || (strncmp(path, dir, n) == 0 &&
	    (path[n] == '\0' || path[n] == '/'));
}

/* Cells may write the venv: under none they may write what the user
 * may, else where the work dir or an --allow-write dir holds it. */
static bool
venv_writable(const struct coil_opts *o, const char *real)
{
	size_t i;

	if (o->sbx.profile == SANDBOX_NONE ||
	    venv_beneath(real, o->workdir))
		return true;
	for (i = 0; i < o->sbx.n_allow_write; i++)
		if (venv_beneath(real, o->sbx.allow_write[i]))
			return true;
	return false;
}

int
options_venv(struct coil_opts *o)
{
	const char *dir = o->venv_arg, *from = "--venv";
	struct hostfs_dir d = { -1, false, false };
	struct venv_cfg cfg = { "", true };
	char err[512], link[64], real[PATH_MAX];
	ssize_t n;
	int rc = 2;

	/* an attached UI runs no worker of its own */
	if (o->attach != NULL)
		return 0;
	if (dir == NULL && !o->no_venv) {
		dir = getenv("VIRTUAL_ENV");
		from = "$VIRTUAL_ENV";
	}
	if (dir == NULL || *dir == '\0')
		return 0;
	if (hostfs_walk(dir, HOSTFS_DIR, &d, NULL, err, sizeof err) == -1) {
		options_bad("%s '%s': %s%s", from, dir, err, o->venv_arg ==
		    NULL ? "; start coil with --venv DIR or --no-venv" : "");
		goto out;
	}
	if (venv_read_cfg(&d, &cfg, err, sizeof err) == -1) {
		options_bad("%s '%s' is not a virtualenv (pyvenv.cfg: %s): "
		    "make one with 'python%s -m venv %s', or start coil %s",
		    from, dir, err, PYTHON_EMBED_VERSION, dir,
		    o->venv_arg == NULL ? "with --no-venv" : "without --venv");
		goto out;
	}
	if (cfg.version[0] == '\0' ||
	    strcmp(cfg.version, PYTHON_EMBED_VERSION) != 0) {
		options_bad("venv '%s' is for Python %s, coil embeds %s: its "
		    "packages would not load here; make a venv for %s "
		    "('python%s -m venv DIR', then install into it), or start "
		    "coil %s", dir, cfg.version[0] != '\0' ? cfg.version :
		    "(pyvenv.cfg names no version)", PYTHON_EMBED_VERSION,
		    PYTHON_EMBED_VERSION, PYTHON_EMBED_VERSION,
		    o->venv_arg == NULL ? "with --no-venv" : "without --venv");
		goto out;
	}
	/* its real path, as the sandbox's binds have theirs */
	snprintf(link, sizeof link, "/proc/self/fd/%d", d.fd);
	/* fs(proc): the held directory's name, through /proc/self/fd */
	n = readlink(link, real, sizeof real - 1);
	if (n <= 0 || real[0] != '/') {
		options_bad("%s '%s': cannot name the directory: %s", from, dir,
		    n < 0 ? strerror(errno) : "not a path");
		goto out;
	}
	real[n] = '\0';
	o->sbx.venv = xstrdup(real);
	o->sbx.venv_fd = d.fd;
	d.fd = -1;
	o->venv_system_site = cfg.system_site;
	o->venv_writable = venv_writable(o, real);
	rc = 0;
out:
	hostfs_close(&d);
	return rc;
}
