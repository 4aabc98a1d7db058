/*
 * plain-page.c - a long text a cell asks the plain REPL to page (help()
 * and pydoc's): through the person's $PAGER, made safe for the
 * terminal first.  Supervisor only.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "plain-int.h"
#include "termsafe.h"

/*
 * help(obj) at a terminal: the text through $PAGER (else "less -FX",
 * which leaves a short text on the screen as it is), or printed when no
 * pager runs.  The pager is the person's program on their terminal,
 * outside the sandbox, fed nothing but the text; a pager that quits
 * early must not kill coil with SIGPIPE.
 */
void
plain_page(const struct plain *p, const char *text)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	const char *pager = getenv("PAGER");
	struct buf safe;
	FILE *f;
	int status;

	/* the pager may pass what it is given to the terminal as it is
	 * (PAGER=cat, less -R): the cell's text is made safe first */
	buf_init(&safe);
	if (p->safe[1]) {
		termsafe_text(text, strlen(text), 0, &safe);
		buf_addstr(&safe, "");
		text = safe.p;
	}
	if (pager == NULL || *pager == '\0')
		pager = "less -FX";
	fflush(stdout);
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old);
	/* fs(exec): $PAGER, the user's; with a home cells may write, less
	 * in its secure mode and no lesskey file (main.c's main_home) */
	f = popen(pager, "w");
	status = -1;
	if (f != NULL) {
		fputs(text, f);
		status = pclose(f);
	}
	sigaction(SIGPIPE, &old, NULL);
	if (status == -1 || (WIFEXITED(status) && WEXITSTATUS(status) == 127))
		plain_raw(1, text, strlen(text));
	buf_free(&safe);
}
