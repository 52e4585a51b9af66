/*
 * bench/yaml_floor.c - the least any program pays to read run specs with
 * libfyaml: the parser's events for each file, with the text of every scalar
 * (what berth's reader asks of each), and nothing else: no tree, no rules,
 * no output. bench/render.sh times it on the same files as `berth render -`,
 * so the table shows how much of berth's time is the YAML parser's.
 *
 *   yaml_floor FILE...      prints "DOCUMENTS SCALARS BYTES" on stdout
 *
 * The parser is set up as src/spec/yaml.c sets it up (YAML 1.2, no mmap, quiet).
 * A file that starts with '{' or '[' is a stream of JSON values (one spec a
 * line, bench/gen_specs.py --json), which libfyaml reads one value a stream:
 * one parser in JSON mode reads each value in turn, each the rest of its line
 * (memchr), and takes the next without a reset once its stream ended cleanly:
 * the least work that gives libfyaml one value at a time, as berth does since
 * issue 28's fourth pass (before it, the floor cut values by their brackets and
 * reset the parser between them, as berth did: its figures were 3 to 4 % lower).
 */
#include <libfyaml.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *data = NULL;
	size_t cap = 0, n = 0, got;
	do {
		if (n == cap) {
			char *p = realloc(data, cap = cap ? cap * 2 : 1 << 20);
			if (!p) {
				free(data);
				fclose(f);
				return NULL;
			}
			data = p;
		}
		got = fread(data + n, 1, cap - n, f);
		n += got;
	} while (got);
	fclose(f);
	*len = n;
	return data;
}

/* One pass of p over data[0, len): counts into the totals; 0, or -1 on a
 * stream error. */
static int pass(struct fy_parser *p, const char *data, size_t len, long *docs, long *scalars,
		long *bytes)
{
	if (fy_parser_set_string(p, data, len))
		return -1;
	struct fy_event *e;
	while ((e = fy_parser_parse(p))) {
		if (e->type == FYET_DOCUMENT_START)
			(*docs)++;
		if (e->type == FYET_SCALAR) {
			size_t n = 0;
			if (fy_token_get_text(e->scalar.value, &n))
				(*scalars)++;
			*bytes += (long)n;
		}
		fy_parser_event_free(p, e);
	}
	return fy_parser_get_stream_error(p) ? -1 : 0;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int main(int argc, char **argv)
{
	long docs = 0, scalars = 0, bytes = 0;
	for (int i = 1; i < argc; i++) {
		size_t len, at = 0;
		char *data = slurp(argv[i], &len);
		if (!data) {
			perror(argv[i]);
			return 1;
		}
		while (at < len && is_space(data[at]))
			at++;
		int json = at < len && (data[at] == '{' || data[at] == '[');
		struct fy_parse_cfg cfg = {
			.flags = FYPCF_QUIET | FYPCF_DEFAULT_VERSION_1_2 | FYPCF_DISABLE_MMAP_OPT |
				 (json ? FYPCF_JSON_FORCE : FYPCF_JSON_NONE),
		};
		struct fy_parser *p = fy_parser_create(&cfg);
		int bad = !p;
		if (!json && !bad) {
			bad = pass(p, data, len, &docs, &scalars, &bytes);
		} else {
			while (!bad && at < len) {
				const char *nl = memchr(data + at, '\n', len - at);
				size_t end = nl ? (size_t)(nl - data) : len;
				bad = pass(p, data + at, end - at, &docs, &scalars, &bytes);
				for (at = end; at < len && is_space(data[at]);)
					at++;
			}
		}
		if (p)
			fy_parser_destroy(p);
		free(data);
		if (bad) {
			fprintf(stderr, "%s: not YAML\n", argv[i]);
			return 1;
		}
	}
	printf("%ld %ld %ld\n", docs, scalars, bytes);
	return 0;
}
