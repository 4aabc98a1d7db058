/*
 * mcp-http-io.c - the edges of MCP over HTTP (see mcp-http-int.h): the
 * address, the token, the guards on every request, the plain answers.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcp-http-int.h"
#include "mcp-int.h"
#include "util.h"

#define HTTP_TOKEN_MAX 4096

/* ---- the address ---------------------------------------------------- */

static void http_edge_of_sa(struct http_edge *e);

int
http_edge_addr(struct http_edge *e, const char *spec, char *err, size_t len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
	    .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV }, *ai = NULL;
	const char *colon = strrchr(spec, ':'), *port;
	char host[48];
	size_t n;
	int rc;

	if (colon == NULL) {
		snprintf(host, sizeof host, "127.0.0.1");
		port = spec;
	} else {
		n = (size_t)(colon - spec);
		if (n >= 2 && spec[0] == '[' && spec[n - 1] == ']')
			spec++, n -= 2;
		if (n == 0 || n >= sizeof host)
			return err_set(err, len, "--http '%s': give ADDR:PORT, "
			    "such as 127.0.0.1:8080 or [::1]:8080", spec);
		memcpy(host, spec, n);
		host[n] = '\0';
		port = colon + 1;
	}
	if (*port == '\0' || strspn(port, "0123456789") != strlen(port) ||
	    atol(port) > 65535)
		return err_set(err, len, "--http '%s': the port must be a "
		    "number from 0 to 65535", spec);
	if ((rc = getaddrinfo(host, port, &hints, &ai)) != 0)
		return err_set(err, len, "--http: '%s' is not a numeric "
		    "address (%s): give one such as 127.0.0.1 or ::1", host,
		    gai_strerror(rc));
	memcpy(&e->sa, ai->ai_addr, ai->ai_addrlen);
	e->salen = ai->ai_addrlen;
	freeaddrinfo(ai);
	http_edge_of_sa(e);
	return 0;
}

/* What e->sa is: loopback, any, its host and port as text. */
static void
http_edge_of_sa(struct http_edge *e)
{
	char host[INET6_ADDRSTRLEN];

	if (e->sa.ss_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&e->sa;
		uint32_t a = ntohl(in->sin_addr.s_addr);

		e->loopback = (a >> 24) == 127;
		e->any = a == 0;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
		snprintf(e->host, sizeof e->host, "%s", host);
		e->port = ntohs(in->sin_port);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&e->sa;

		e->loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
		e->any = IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr);
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
		snprintf(e->host, sizeof e->host, "[%s]", host);
		e->port = ntohs(in6->sin6_port);
	}
}

/* The socket systemd passed (sdfd.h, taken and checked in main): its
 * address decides, as a bound one's, whether a token is required. */
int
http_edge_passed(struct http_edge *e, int fd, char *err, size_t len)
{
	e->salen = sizeof e->sa;
	if (getsockname(fd, (struct sockaddr *)&e->sa, &e->salen) == -1)
		return err_set(err, len, "--http systemd: getsockname: %s",
		    strerror(errno));
	http_edge_of_sa(e);
	e->passed = fd;
	return 0;
}

int
http_edge_listen(struct http_edge *e, char *err, size_t len)
{
	struct sockaddr_storage got;
	socklen_t glen = sizeof got;
	int fd, one = 1;

	if (e->passed >= 0)
		return e->passed;
	fd = socket(e->sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0);
	if (fd == -1)
		return err_set(err, len, "--http: socket: %s",
		    strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	/* fs(user): the address the user named, an inet one (no path) */
	if (bind(fd, (struct sockaddr *)&e->sa, e->salen) == -1 ||
	    listen(fd, 128) == -1 ||
	    getsockname(fd, (struct sockaddr *)&got, &glen) == -1) {
		err_set(err, len, "--http: cannot listen on %s: %s", e->host,
		    strerror(errno));
		close(fd);
		return -1;
	}
	e->port = ntohs(got.ss_family == AF_INET ?
	    ((struct sockaddr_in *)&got)->sin_port :
	    ((struct sockaddr_in6 *)&got)->sin6_port);
	return fd;
}

/* ---- the token ------------------------------------------------------ */

/* The token in a file only its owner may read, read through one
 * descriptor (no link followed).  0, or -1. */
static int
http_token_file(struct http_edge *e, const char *path, char *err,
    size_t len)
{
	char buf[HTTP_TOKEN_MAX + 1];
	struct stat st;
	ssize_t n;
	int fd, rc = -1;

	/* fs(user): the file the user named, read once before any cell
	 * runs; O_NONBLOCK, so that a FIFO there cannot hang coil before
	 * the check below refuses it */
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1)
		return err_set(err, len, "--http-token-file: cannot read %s: "
		    "%s", path, strerror(errno));
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode))
		err_set(err, len, "--http-token-file: %s is not a file", path);
	else if (st.st_uid != geteuid() || (st.st_mode & 077) != 0)
		err_set(err, len, "--http-token-file: %s must be yours and "
		    "closed to others (chmod 600 it); it is mode %04o", path,
		    (unsigned)(st.st_mode & 07777));
	else if ((n = read(fd, buf, sizeof buf)) < 0)
		err_set(err, len, "--http-token-file: %s: %s", path,
		    strerror(errno));
	else if (n > HTTP_TOKEN_MAX)
		err_set(err, len, "--http-token-file: %s holds more than %d "
		    "bytes", path, HTTP_TOKEN_MAX);
	else {
		while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
			n--;
		e->token = xstrndup(buf, (size_t)n);
		rc = 0;
	}
	close(fd);
	explicit_bzero(buf, sizeof buf);
	return rc;
}

int
http_edge_token(struct http_edge *e, const struct coil_opts *opts,
    char *err, size_t len)
{
	const char *env = getenv("COIL_HTTP_TOKEN");
	size_t i;

	if (opts->http_token_file != NULL && env != NULL)
		return err_set(err, len, "COIL_HTTP_TOKEN and "
		    "--http-token-file both give a token: give one");
	if (env != NULL) {
		e->token = xstrdup(env);
		unsetenv("COIL_HTTP_TOKEN");
	} else if (opts->http_token_file != NULL &&
	    http_token_file(e, opts->http_token_file, err, len) == -1) {
		return -1;
	}
	if (e->token == NULL && !e->loopback)
		return err_set(err, len, "--http %s is not a loopback address: "
		    "give a bearer token in COIL_HTTP_TOKEN or "
		    "--http-token-file FILE", e->host);
	if (e->token == NULL)
		return 0;
	/* Visible ASCII, as a header carries it. */
	for (i = 0; e->token[i] != '\0'; i++)
		if (e->token[i] <= ' ' || e->token[i] > '~')
			break;
	if (i < 16 || e->token[i] != '\0')
		return err_set(err, len, "the --http token must be 16 or more "
		    "visible ASCII characters (no spaces)");
	return 0;
}

void
http_edge_free(struct http_edge *e)
{
	if (e->token != NULL) {
		explicit_bzero(e->token, strlen(e->token));
		free(e->token);
	}
	e->token = NULL;
}

/* ---- the guards ----------------------------------------------------- */

/* Equal, in a time that does not depend on where they differ. */
static bool
http_same(const char *a, const char *want)
{
	size_t la = strlen(a), lw = strlen(want), i;
	unsigned char d = la != lw;

	for (i = 0; i < lw; i++)
		d |= (unsigned char)(a[i < la ? i : 0] ^ want[i]);
	return d == 0;
}

/* The host of "host[:port]" (v6 in brackets, kept) into out. */
static void
http_host_of(const char *hp, char *out, size_t len)
{
	const char *end = hp[0] == '[' ? strchr(hp, ']') : strchr(hp, ':');
	size_t n = end == NULL ? strlen(hp) : (size_t)(end - hp) +
	    (hp[0] == '[');

	if (n >= len)
		n = len - 1;
	memcpy(out, hp, n);
	out[n] = '\0';
}

/* A name that is loopback whatever DNS says: localhost, [::1], or an
 * IPv4 address in 127/8 written as one.  Not any name that starts with
 * "127.": 127.attacker.example can be rebound to 127.0.0.1, and a page
 * of the attacker's would then pass the Host and Origin checks. */
static bool
http_loopback_name(const char *host)
{
	struct in_addr a;

	return strcasecmp(host, "localhost") == 0 ||
	    strcmp(host, "[::1]") == 0 ||
	    (inet_pton(AF_INET, host, &a) == 1 &&
	    ntohl(a.s_addr) >> 24 == 127);
}

/* An Origin we answer: a loopback one, or the address bound. */
static bool
http_origin_ok(const struct http_edge *e, const char *origin)
{
	const char *p = strstr(origin, "://");
	char host[256];

	if (p == NULL || (strncmp(origin, "http://", 7) != 0 &&
	    strncmp(origin, "https://", 8) != 0))
		return false;
	http_host_of(p + 3, host, sizeof host);
	return http_loopback_name(host) || (!e->any &&
	    strcasecmp(host, e->host) == 0);
}

unsigned
http_edge_check(const struct http_edge *e, struct MHD_Connection *c,
    const char *method, const char **why)
{
	const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    "Origin"), *host = MHD_lookup_connection_value(c,
	    MHD_HEADER_KIND, "Host"), *auth = MHD_lookup_connection_value(c,
	    MHD_HEADER_KIND, "Authorization");
	char h[256];

	if (origin != NULL && !http_origin_ok(e, origin)) {
		*why = "forbidden: this Origin may not use coil's MCP server";
		return MHD_HTTP_FORBIDDEN;
	}
	if (e->loopback && host != NULL) {
		http_host_of(host, h, sizeof h);
		if (!http_loopback_name(h)) {
			*why = "forbidden: the Host is not this loopback "
			    "server's";
			return MHD_HTTP_FORBIDDEN;
		}
	}
	if (e->token != NULL) {
		if (auth == NULL || strncasecmp(auth, "Bearer ", 7) != 0) {
			*why = "unauthorized: a bearer token is required";
			return MHD_HTTP_UNAUTHORIZED;
		}
		if (!http_same(auth + 7, e->token)) {
			*why = "unauthorized: wrong bearer token";
			return MHD_HTTP_UNAUTHORIZED;
		}
	}
	if (strcmp(method, "POST") != 0 && strcmp(method, "GET") != 0 &&
	    strcmp(method, "DELETE") != 0) {
		*why = "method not allowed: /mcp takes POST, GET and DELETE";
		return MHD_HTTP_METHOD_NOT_ALLOWED;
	}
	return 0;
}

/* Before the body: the guards, the types, the size announced.  0 when
 * the request goes on, else the refusal is queued (*rc). */
int
http_edge_headers(const struct http_edge *e, size_t max_request,
    struct MHD_Connection *c, const char *url, const char *method,
    enum MHD_Result *rc)
{
#define HDR(name) MHD_lookup_connection_value(c, MHD_HEADER_KIND, name)
	const char *why, *type = HDR("Content-Type"), *accept = HDR("Accept"),
	    *clen = HDR("Content-Length"), *ver = HDR("MCP-Protocol-Version");
#undef HDR
	unsigned status;

	if (strcmp(url, "/mcp") != 0)
		status = MHD_HTTP_NOT_FOUND, why = "not found: coil serves "
		    "MCP at /mcp";
	else if ((status = http_edge_check(e, c, method, &why)) != 0)
		;
	else if (ver != NULL && !mcp_version_known(ver))
		status = MHD_HTTP_BAD_REQUEST, why = "bad request: "
		    "MCP-Protocol-Version names a revision coil does not "
		    "speak (2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05, "
		    "2026-07-28)";
	else if (strcmp(method, "POST") != 0)
		return 0;
	else if (type == NULL || strncasecmp(type, "application/json", 16)
	    != 0 || (type[16] != '\0' && type[16] != ';' && type[16] != ' '))
		status = MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, why = "unsupported "
		    "media type: POST a JSON-RPC message as application/json";
	else if (accept == NULL || !http_accepts(accept, "application/json")
	    || !http_accepts(accept, "text/event-stream"))
		status = MHD_HTTP_NOT_ACCEPTABLE, why = "not acceptable: "
		    "Accept must take application/json and text/event-stream";
	else if (clen != NULL && strtoull(clen, NULL, 10) > max_request)
		status = MHD_HTTP_CONTENT_TOO_LARGE, why = "content too large: "
		    "the body is over --max-request";
	else
		return 0;
	*rc = http_refuse(c, status, why);
	return -1;
}

/* Whether a media range of accept ("a/b;q=.5", "c/ *") covers type. */
bool
http_accepts(const char *accept, const char *type)
{
	const char *p = accept, *slash = strchr(type, '/');
	size_t n, major = (size_t)(slash - type);

	while (p != NULL && *p != '\0') {
		p += strspn(p, " \t,");
		n = strcspn(p, ";, \t");
		if ((n == strlen(type) && strncasecmp(p, type, n) == 0) ||
		    (n == 3 && strncmp(p, "*/*", 3) == 0) ||
		    (n == major + 2 && strncasecmp(p, type, major + 1) == 0 &&
		    p[major + 1] == '*'))
			return true;
		p = strchr(p, ',');
	}
	return false;
}

/* ---- messages ------------------------------------------------------ */

/* Whether a line of mcp_send's is an answer (mcp_send writes "id" right
 * after "jsonrpc" in answers, "method" in notifications). */
bool
http_is_answer(const char *line, size_t len)
{
	static const char answer[] = "{\"jsonrpc\":\"2.0\",\"id\"";

	return len >= sizeof answer - 1 &&
	    memcmp(line, answer, sizeof answer - 1) == 0;
}

/* Whether the answer in b is a result (not an error). */
bool
http_has_result(const struct buf *b)
{
	json_t *v = json_loadb(b->p, b->len, 0, NULL);
	bool ok = json_object_get(v, "result") != NULL;

	json_decref(v);
	return ok;
}

/* ---- plain answers -------------------------------------------------- */

enum MHD_Result
http_reply(struct MHD_Connection *c, unsigned status, const char *type,
    const char *body, size_t len, const char *sid)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len,
	    (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result rc;

	if (r == NULL)
		return MHD_NO;
	if (type != NULL)
		MHD_add_response_header(r, "Content-Type", type);
	if (sid != NULL && *sid != '\0')
		MHD_add_response_header(r, "Mcp-Session-Id", sid);
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, "WWW-Authenticate", strstr(body,
		    "wrong") != NULL ? "Bearer realm=\"coil\", "
		    "error=\"invalid_token\"" : "Bearer realm=\"coil\"");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, "Allow", "POST, GET, DELETE");
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

enum MHD_Result
http_refuse(struct MHD_Connection *c, unsigned status, const char *msg)
{
	json_t *e = json_pack("{s:s, s:{s:i, s:s}, s:n}", "jsonrpc", "2.0",
	    "error", "code", status == MHD_HTTP_UNAUTHORIZED ? -32001 :
	    -32000, "message", msg, "id");
	char *body = json_dumps(e, JSON_COMPACT);
	enum MHD_Result rc;

	json_decref(e);
	if (body == NULL)
		fatal("cannot encode an HTTP refusal");
	rc = http_reply(c, status, "application/json", body, strlen(body),
	    NULL);
	free(body);
	return rc;
}
