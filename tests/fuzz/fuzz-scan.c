/*
 * fuzz-scan.c - libFuzzer harness for chan_scan (chan.c), the weighing
 * of a frame from the sandbox before jansson parses it.  The input is a
 * frame body.  Whatever the bytes, the scan must read within them and
 * never crash; for every body jansson accepts (without duplicate keys,
 * which the scan counts as often as they come), the depth and items it
 * counted must be exactly those of the tree jansson built (values plus
 * object keys), so that a frame passing the limits costs what the limits
 * say; and with the first input byte as tight limits (of depth, items,
 * and the bytes of an object key and of a string value), a body that
 * passes them must parse into a tree within them.
 */
#include "config.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chan.h"

/* The longest object key and string value of a tree, in bytes. */
struct fuzz_strings {
	size_t key, string;
};

/* Values and object keys of v, and its nesting, as jansson built it;
 * its longest strings into *s. */
static void
fuzz_weigh(json_t *v, unsigned level, struct chan_weight *w,
    struct fuzz_strings *s)
{
	const char *key;
	json_t *e;
	size_t i;

	w->items++;
	if (json_is_string(v) && json_string_length(v) > s->string)
		s->string = json_string_length(v);
	if (json_is_object(v) || json_is_array(v))
		if (level + 1 > w->depth)
			w->depth = level + 1;
	if (json_is_object(v)) {
		json_object_foreach(v, key, e) {
			w->items++;
			if (strlen(key) > s->key)
				s->key = strlen(key);
			fuzz_weigh(e, level + 1, w, s);
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, e)
			fuzz_weigh(e, level + 1, w, s);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct chan_limits roomy = {
		.frame = SIZE_MAX, .depth = UINT32_MAX, .items = SIZE_MAX,
		.key = SIZE_MAX, .string = SIZE_MAX,
	};
	struct chan_limits tight;
	struct chan_weight scan, tree = { 0, 0 };
	struct fuzz_strings longest = { 0, 0 };
	char why[96];
	json_t *m;
	int rc;

	if (size == 0)
		return 0;
	tight.frame = SIZE_MAX;
	tight.depth = data[0] % 8;
	tight.items = data[0] / 8;
	tight.key = data[0] % 16;
	tight.string = data[0] / 4;
	data++;
	size--;
	/* a copy of its own size, so that ASan sees any read past it */
	{
		char *p = malloc(size ? size : 1);

		memcpy(p, data, size);
		rc = chan_scan(p, size, &roomy, &scan, why, sizeof why);
		/* a key given twice is counted twice (jansson builds
		 * both, then keeps one): exact only without them */
		m = json_loadb(p, size, JSON_ALLOW_NUL |
		    JSON_REJECT_DUPLICATES, NULL);
		free(p);
	}
	if (rc != 0)
		abort();
	if (m != NULL) {
		fuzz_weigh(m, 0, &tree, &longest);
		if (tree.depth != scan.depth || tree.items != scan.items)
			abort();
	}
	rc = chan_scan((const char *)data, size, &tight, &scan, why,
	    sizeof why);
	if (rc == 0 && m != NULL && (tree.depth > tight.depth ||
	    tree.items > tight.items || longest.key > tight.key ||
	    longest.string > tight.string))
		abort();
	if (rc == -1 && why[0] == '\0')
		abort();
	json_decref(m);
	return 0;
}
