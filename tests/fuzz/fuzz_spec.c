/*
 * fuzz_spec.c - libFuzzer target for the run spec reader: YAML/JSON
 * parsing, decoding and validation, and the error formatter. Any crash,
 * leak, sanitizer report or hang is a bug.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "berth/berth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	berth_spec_set *set = NULL;
	berth_error *err = NULL;
	char line[512];
	int ret = berth_spec_parse(&set, "fuzz.yaml", (const char *)data, size, &err);

	if ((ret < 0) != (set == NULL))
		abort(); /* a set is returned exactly on success */
	if (ret < 0 && berth_error_errors(err) == 0)
		abort(); /* a failure always says why */
	for (size_t i = 0; i < berth_error_count(err); i++)
		berth_problem_format(berth_error_get(err, i), line, sizeof(line));
	for (size_t i = 0; i < berth_spec_set_count(set); i++) {
		const berth_spec *s = berth_spec_set_get(set, i);
		char q[BERTH_QUANTITY_STR_MAX];
		if (s->resources.mem.requests.set)
			berth_quantity_format(&s->resources.mem.requests.q, q, sizeof(q));
	}
	berth_error_free(err);
	berth_spec_set_free(set);
	return 0;
}
