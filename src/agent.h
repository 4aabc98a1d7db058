/*
 * agent.h - agent mode: the JSON-lines front end (coil --agent).
 * Reads requests from fd 0, writes one response line each to fd 1, and
 * serves them through the session.  Returns the process exit status.
 */
#ifndef COIL_AGENT_H
#define COIL_AGENT_H

#include "opts.h"

int agent_main(const struct coil_opts *opts);

#endif
