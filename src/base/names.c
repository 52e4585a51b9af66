/*
 * names.c - name rules as Kubernetes' apimachinery validation states them.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "base/internal.h"
#include "base/names.h"

static int is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int is_alnum(char c)
{
	return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

static const char *check_label_part(const char *s, size_t n)
{
	if (n == 0)
		return "must not be empty";
	if (n > 63)
		return "must be at most 63 characters";
	for (size_t i = 0; i < n; i++)
		if (!is_lower_alnum(s[i]) && s[i] != '-')
			return "must consist of lowercase letters, digits and '-'";
	if (!is_lower_alnum(s[0]) || !is_lower_alnum(s[n - 1]))
		return "must start and end with a lowercase letter or a digit";
	return NULL;
}

const char *berth_check_dns_label(const char *s)
{
	return check_label_part(s, strlen(s));
}

const char *berth_check_dns_subdomain(const char *s)
{
	size_t n = strlen(s);
	if (n == 0)
		return "must not be empty";
	if (n > 253)
		return "must be at most 253 characters";
	for (const char *p = s;;) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);
		if (len == 0)
			return "must not have empty parts between dots";
		for (size_t i = 0; i < len; i++)
			if (!is_lower_alnum(p[i]) && p[i] != '-')
				return "must consist of lowercase letters, digits, '-' and '.'";
		if (!is_lower_alnum(p[0]) || !is_lower_alnum(p[len - 1]))
			return "must start and end each part with a lowercase letter or a digit";
		if (!dot)
			break;
		p = dot + 1;
	}
	return NULL;
}

static const char *check_name_part(const char *s, size_t n, int allow_empty)
{
	if (n == 0)
		return allow_empty ? NULL : "must not be empty";
	if (n > 63)
		return "must be at most 63 characters";
	for (size_t i = 0; i < n; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return "must consist of letters, digits, '-', '_' and '.'";
	if (!is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return "must start and end with a letter or a digit";
	return NULL;
}

const char *berth_check_qualified_name(const char *s)
{
	const char *slash = strchr(s, '/');
	if (!slash)
		return check_name_part(s, strlen(s), 0);
	if (strchr(slash + 1, '/'))
		return "must have at most one '/'";
	if (slash == s)
		return "must not have an empty prefix before '/'";
	char prefix[256];
	size_t pn = (size_t)(slash - s);
	if (pn >= sizeof(prefix))
		return "must have a prefix of at most 253 characters";
	memcpy(prefix, s, pn);
	prefix[pn] = '\0';
	if (berth_check_dns_subdomain(prefix))
		return "must have a prefix that is a DNS subdomain (lowercase letters, digits, '-' and '.')";
	return check_name_part(slash + 1, strlen(slash + 1), 0);
}

const char *berth_check_label_value(const char *s)
{
	return check_name_part(s, strlen(s), 1);
}

const char *berth_check_labelled_name(const char *s)
{
	const char *why = berth_check_dns_subdomain(s);
	return why ? why : berth_check_label_value(s);
}

const char *berth_check_env_name(const char *s)
{
	if (!*s)
		return "must not be empty";
	if (s[0] >= '0' && s[0] <= '9')
		return "must not start with a digit";
	if (strchr(s, '='))
		return "must not contain '=' (it ends a name in the environment)";
	for (const char *p = s; *p; p++)
		if (!is_alnum(*p) && *p != '_' && *p != '-' && *p != '.')
			return "must consist of letters, digits, '_', '-' and '.'";
	if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0 || strncmp(s, "..", 2) == 0)
		return "must not be '.' or start with '..'";
	return NULL;
}

const char *berth_check_port_name(const char *s)
{
	size_t n = strlen(s);
	int letter = 0;
	if (n == 0 || n > 15)
		return "must be 1 to 15 characters";
	for (size_t i = 0; i < n; i++) {
		if (!is_lower_alnum(s[i]) && s[i] != '-')
			return "must consist of lowercase letters, digits and '-'";
		letter |= s[i] >= 'a' && s[i] <= 'z';
		if (s[i] == '-' && (i == 0 || i == n - 1 || s[i - 1] == '-'))
			return "must not start or end with '-' or hold '--'";
	}
	return letter ? NULL : "must contain at least one letter";
}

const char *berth_check_secret_key(const char *s)
{
	size_t n = strlen(s);
	if (n == 0)
		return "must not be empty";
	if (n > 253)
		return "must be at most 253 characters";
	for (size_t i = 0; i < n; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return "may hold only letters, digits, '-', '_' and '.' (a Secret key)";
	/* a secret is also a file of that name (secret volumes) */
	if (strcmp(s, ".") == 0 || strncmp(s, "..", 2) == 0)
		return "must not be '.' or start with '..'";
	return NULL;
}

char *berth_env_name_from(const char *name, char *out, size_t len)
{
	size_t k = 0;
	if (!len)
		return out;
	if (*name >= '0' && *name <= '9' && k + 1 < len)
		out[k++] = '_';
	for (const char *p = name; *p && k + 1 < len; p++)
		out[k++] = *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : is_alnum(*p) ? *p : '_';
	out[k] = 0;
	return out;
}

const char *berth_check_printable(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return "must not contain control characters";
	return NULL;
}

/* ---- cron ---------------------------------------------------------------- */

static const char *const months[] = {"jan", "feb", "mar", "apr", "may", "jun",
				     "jul", "aug", "sep", "oct", "nov", "dec"};
static const char *const days[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

/* Reads a number or a name; returns -1 when there is none. */
static long cron_value(const char **pp, const char *end, const char *const *names, int nnames,
		       int base)
{
	const char *p = *pp;
	long v = 0;
	for (int i = 0; end - p >= 3 && i < nnames; i++) {
		if (strncasecmp(p, names[i], 3) == 0) {
			*pp = p + 3;
			return i + base;
		}
	}
	if (p >= end || !isdigit((unsigned char)*p))
		return -1;
	while (p < end && isdigit((unsigned char)*p)) {
		v = v * 10 + (*p - '0');
		if (v > 1000)
			return -1;
		p++;
	}
	*pp = p;
	return v;
}

static int cron_field(const char *s, const char *end, long lo, long hi, const char *const *names,
		      int nnames, int base)
{
	/* list of: (* | a | a-b) [/step] */
	const char *p = s;
	for (;;) {
		const char *q = p;
		long a, b;
		if (q < end && *q == '*') {
			q++;
			a = lo;
			b = hi;
		} else {
			if ((a = cron_value(&q, end, names, nnames, base)) < 0)
				return -1;
			b = a;
			if (q < end && *q == '-') {
				q++;
				if ((b = cron_value(&q, end, names, nnames, base)) < 0)
					return -1;
			}
			if (a < lo || b > hi || a > b)
				return -1;
		}
		if (q < end && *q == '/') {
			q++;
			long step = cron_value(&q, end, NULL, 0, 0);
			if (step < 1)
				return -1;
		}
		if (q == end)
			return 0;
		if (*q != ',')
			return -1;
		p = q + 1;
	}
}

const char *berth_check_cron(const char *s)
{
	static const char *const macros[] = {"@yearly", "@annually", "@monthly", "@weekly",
					     "@daily", "@midnight", "@hourly"};
	static const struct {
		long lo, hi;
		const char *const *names;
		int nnames, base;
		const char *what;
	} fields[5] = {
		{0, 59, NULL, 0, 0, "has a bad minute field (0-59)"},
		{0, 23, NULL, 0, 0, "has a bad hour field (0-23)"},
		{1, 31, NULL, 0, 0, "has a bad day-of-month field (1-31)"},
		{1, 12, months, 12, 1, "has a bad month field (1-12 or jan-dec)"},
		{0, 6, days, 7, 0, "has a bad day-of-week field (0-6 or sun-sat)"},
	};
	if (s[0] == '@') {
		for (size_t i = 0; i < BERTH_ARRAY_SIZE(macros); i++)
			if (strcmp(s, macros[i]) == 0)
				return NULL;
		return "is not one of @yearly @annually @monthly @weekly @daily @midnight @hourly";
	}
	const char *p = s;
	for (int f = 0; f < 5; f++) {
		while (*p == ' ' || *p == '\t')
			p++;
		const char *start = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (p == start)
			return "must have 5 fields: minute hour day-of-month month day-of-week";
		if (f == 2 || f == 4) {
			/* '?' is accepted by Kubernetes for day fields */
			if (p - start == 1 && *start == '?')
				continue;
		}
		if (cron_field(start, p, fields[f].lo, fields[f].hi, fields[f].names, fields[f].nnames, fields[f].base) < 0)
			return fields[f].what;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p)
		return "must have 5 fields: minute hour day-of-month month day-of-week";
	return NULL;
}

/* ---- did you mean --------------------------------------------------------- */

static size_t fold(const char *s, char *out, size_t cap)
{
	size_t n = 0;
	for (; *s && n + 1 < cap; s++)
		if (*s != '_' && *s != '-')
			out[n++] = (char)tolower((unsigned char)*s);
	out[n] = '\0';
	return n;
}

/* Edits from a to b: insertions, deletions, substitutions, and two
 * neighbours swapped ("gte" is one edit from "get"; optimal string alignment) */
static size_t distance(const char *a, size_t an, const char *b, size_t bn)
{
	size_t rows[3][65], *older = rows[0], *prev = rows[1], *row = rows[2];
	if (an > 64 || bn > 64)
		return SIZE_MAX;
	for (size_t j = 0; j <= bn; j++)
		prev[j] = j;
	for (size_t i = 1; i <= an; i++) {
		row[0] = i;
		for (size_t j = 1; j <= bn; j++) {
			size_t best = prev[j - 1] + (a[i - 1] != b[j - 1]);
			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    older[j - 2] + 1 < best)
				best = older[j - 2] + 1;
			row[j] = best;
		}
		size_t *t = older;
		older = prev;
		prev = row;
		row = t;
	}
	return prev[bn];
}

const char *berth_suggest(const char *s, const char *const *candidates, size_t n)
{
	char fs[65], fc[65];
	size_t fsn = fold(s, fs, sizeof(fs)), best = SIZE_MAX;
	const char *pick = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!candidates[i])
			continue;
		size_t fcn = fold(candidates[i], fc, sizeof(fc));
		size_t d = distance(fs, fsn, fc, fcn);
		/* a prefix of at least 3 ("mem" for "memory") counts as close */
		if (fsn >= 3 && fcn >= 3 && (strncmp(fs, fc, fcn) == 0 || strncmp(fc, fs, fsn) == 0))
			d = d < 1 ? d : 1;
		if (d < best) {
			best = d;
			pick = candidates[i];
		}
	}
	size_t longest = fsn > 3 ? fsn : 3;
	if (pick && best <= (longest <= 4 ? 1 : longest <= 8 ? 2 : 3) && best < fsn)
		return pick;
	return NULL;
}
