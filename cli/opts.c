/*
 * opts.c - the grammar of each verb (its cli_args: options, the words its
 * first argument is one of, what its arguments are), read by every part of
 * the command that needs it: the check of a command line before the verb
 * runs (an unknown option, a value that is not one of an option's, with a
 * did-you-mean from berth_suggest), shell completion (complete.c) and the
 * man page (man.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

const char *cli_opt_value(const cli_opt *o, size_t i)
{
	if (o->values)
		return o->values[i];
	return o->value_at ? o->value_at(i) : NULL;
}

/* Whether arg ("--name", "--name=VALUE") names o, by its name or its alias. */
static int names(const cli_opt *o, const char *arg, size_t n)
{
	return (strlen(o->name) == n && !strncmp(o->name, arg, n)) ||
	       (o->alias && strlen(o->alias) == n && !strncmp(o->alias, arg, n));
}

const cli_opt *cli_opt_find(const cli_opt *opts, const char *arg)
{
	size_t n = strcspn(arg, "=");
	for (const cli_opt *o = opts; o && o->name; o++)
		if (names(o, arg, n))
			return o;
	return NULL;
}

const char *cli_suggest_opt(const cli_opt *opts, const char *arg)
{
	const char *cand[64];
	size_t n = 0;
	char name[64];
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(arg, "="), arg);
	for (const cli_opt *o = opts; o && o->name && n + 2 <= 64; o++) {
		if (o->flags & CLI_HIDDEN)
			continue;
		cand[n++] = o->name;
		if (o->alias)
			cand[n++] = o->alias;
	}
	/* berth_suggest ignores '-': "-follow" is "--follow" */
	return berth_suggest(name, cand, n);
}

const char *cli_suggest_value(const cli_opt *o, const char *v)
{
	const char *cand[64];
	size_t n = 0;
	for (const char *c; n < 64 && (c = cli_opt_value(o, n));)
		cand[n++] = c;
	return berth_suggest(v, cand, n);
}

int cli_value_ok(const cli_opt *o, const char *v)
{
	const char *c;
	if (!o->values && !o->value_at)
		return 1;
	for (size_t i = 0; (c = cli_opt_value(o, i)); i++)
		if ((o->flags & CLI_ICASE) ? !strcasecmp(c, v) : !strcmp(c, v))
			return 1;
	return 0;
}

/* "a, b or c" of the values of o. */
static void value_list(const cli_opt *o, char *buf, size_t len)
{
	size_t at = 0, n = 0;
	buf[0] = 0;
	while (cli_opt_value(o, n))
		n++;
	for (size_t i = 0; i < n && at < len; i++) {
		int w = snprintf(buf + at, len - at, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ",
				 cli_opt_value(o, i));
		at += w > 0 ? (size_t)w : 0;
	}
}

int cli_value_check(const char *verb, const cli_opt *o, const char *as, const char *v)
{
	if (cli_value_ok(o, v))
		return 0;
	char list[512];
	value_list(o, list, sizeof(list));
	const char *hint = cli_suggest_value(o, v);
	cli_error("%s: %.*s takes %s, not \"%s\"%s%s%s", verb, (int)strcspn(as, "="), as, list, v,
		  hint ? "; did you mean \"" : "", hint ? hint : "", hint ? "\"?" : "");
	return -1;
}

const cli_word *cli_word_find(const cli_word *words, const char *arg)
{
	for (const cli_word *w = words; w && w->name; w++)
		if (!strcmp(w->name, arg))
			return w;
	return NULL;
}

static int check_word(const char *verb, const cli_word *words, const char *arg)
{
	const char *cand[32];
	size_t n = 0;
	if (cli_word_find(words, arg))
		return 0;
	for (const cli_word *w = words; w->name && n < 32; w++)
		cand[n++] = w->name;
	const char *hint = berth_suggest(arg, cand, n);
	/* without a hint, the verb says what it takes */
	if (!hint)
		return 0;
	cli_error("%s: unknown argument \"%s\"; did you mean \"%s\"?", verb, arg, hint);
	return -1;
}

/* "-ojson", "-lteam=a": a short option and its value in one argument, as
 * kubectl takes them, become "-o=json", "-l=team=a" (kept for the process:
 * the verb reads them as it reads "--output=json"). */
static char *joined_args[16]; /* what argv points to: reachable, not a leak */
static size_t njoined;

static const char *joined(const cli_opt *opts, char **argv, int i)
{
	const char *arg = argv[i];
	if (arg[0] != '-' || arg[1] == '-' || !arg[1] || !arg[2] || arg[2] == '=')
		return arg;
	char alias[3] = {'-', arg[1], 0};
	for (const cli_opt *o = opts; o && o->name; o++)
		if (o->alias && !strcmp(o->alias, alias) && o->arg && njoined < 16) {
			size_t n = strlen(arg) + 2;
			char *s = malloc(n);
			if (!s)
				return arg;
			snprintf(s, n, "%s=%s", alias, arg + 2);
			joined_args[njoined++] = s;
			return argv[i] = s;
		}
	return arg;
}

int cli_args_check(const char *verb, const cli_args *a, int argc, char **argv)
{
	int args = 0;
	if (!a)
		return 0;
	for (int i = 1; i < argc; i++) {
		const char *arg = joined(a->opts, argv, i);
		if (!strcmp(arg, "--"))
			break;
		if (arg[0] != '-' || !arg[1]) {
			if (!args++ && a->words && check_word(verb, a->words, arg))
				return -1;
			continue;
		}
		const cli_opt *o = cli_opt_find(a->opts, arg);
		const char *eq = strchr(arg, '=');
		if (!o) {
			const char *hint = cli_suggest_opt(a->opts, arg);
			if (hint)
				cli_error("%s: unknown option \"%.*s\"; did you mean \"%s\"?", verb,
					  (int)(eq ? (size_t)(eq - arg) : strlen(arg)), arg, hint);
			else
				cli_error("%s: unknown option \"%s\" (see 'berth help %s')", verb, arg, verb);
			return -1;
		}
		const char *v = eq ? eq + 1 : NULL;
		if (!o->arg && v) {
			cli_error("%s: %s takes no value", verb, o->name);
			return -1;
		}
		if (o->arg && !v && !(o->flags & CLI_EQ)) {
			if (i + 1 >= argc) {
				cli_error("option %s needs a value", arg);
				return -1;
			}
			v = argv[++i];
		}
		if (v && cli_value_check(verb, o, arg, v))
			return -1;
	}
	return 0;
}

const cli_opt *cli_opt_next(const cli_args *a, int argc, char **argv, int *i, const char **value)
{
	const char *arg = argv[*i];
	*value = NULL;
	if (arg[0] != '-' || !arg[1] || !strcmp(arg, "--"))
		return NULL;
	const cli_opt *o = cli_opt_find(a->opts, arg);
	if (!o)
		return NULL;
	const char *eq = strchr(arg, '=');
	if (eq)
		*value = eq + 1;
	else if (o->arg && !(o->flags & CLI_EQ) && *i + 1 < argc)
		*value = argv[++*i];
	return o;
}
