/*
 * fuzz-request.c - libFuzzer harness for request_parse: any bytes give
 * either a request object with a known op or an error message, never a
 * crash, a leak or an id that is not a string, number or null.
 */
#include "config.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "request.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *req, *id;
	enum op op;
	char err[512];
	int rc;

	rc = request_parse((const char *)data, size, &req, &id, &op, err,
	    sizeof err);
	if (!json_is_string(id) && !json_is_number(id) && !json_is_null(id))
		abort();
	if (rc == 0) {
		if (!json_is_object(req) || (size_t)op >= request_nops ||
		    strcmp(json_string_value(json_object_get(req, "op")),
		    request_ops[op].name) != 0)
			abort();
		json_decref(req);
	} else if (req != NULL || err[0] == '\0' || strlen(err) >= sizeof err) {
		abort();
	}
	json_decref(id);
	return 0;
}
