/*
 * time.c - times and durations as berth writes and reads them
 * (berth/quantity.h): RFC 3339 with milliseconds, and kubectl's durations.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "berth/quantity.h"
#include "base/internal.h"

size_t berth_format_time(char *buf, size_t len, int64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	char day[40];
	if (ms < 0 || !gmtime_r(&t, &tm) || !strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm))
		return (size_t)snprintf(buf, len, "-");
	return (size_t)snprintf(buf, len, "%s.%03dZ", day, (int)(ms % 1000));
}

/* n digits at *s into *v; -1 when there are not n */
static int digits(const char **s, const char *end, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++, (*s)++) {
		if (*s >= end || **s < '0' || **s > '9')
			return -1;
		*v = *v * 10 + (**s - '0');
	}
	return 0;
}

/* days since 1970-01-01 of a civil date (Howard Hinnant's algorithm) */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

int berth_time_parse(const char *s, size_t n, int64_t *ms, size_t *used)
{
	const char *p = s, *end = s + n;
	/* YYYY-MM-DDTHH:MM:SS: each number, then the character after it */
	static const struct {
		int width;
		char sep;
	} parts[] = {{4, '-'}, {2, '-'}, {2, 'T'}, {2, ':'}, {2, ':'}, {2, 0}};
	int v[6];
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(parts); i++) {
		if (digits(&p, end, parts[i].width, &v[i]))
			return -1;
		/* (the date and the time apart by 'T', 't' or, as RFC 3339 allows, a space) */
		if (parts[i].sep && (p >= end || (*p != parts[i].sep && *p != (parts[i].sep | 0x20) &&
						  !(parts[i].sep == 'T' && *p == ' '))))
			return -1;
		p += parts[i].sep != 0;
	}
	int y = v[0], mo = v[1], d = v[2], h = v[3], mi = v[4], se = v[5];
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
		return -1;
	int64_t frac = 0;
	if (p < end && *p == '.') {
		int k = 0;
		for (p++; p < end && *p >= '0' && *p <= '9'; p++, k++)
			if (k < 3)
				frac = frac * 10 + (*p - '0');
		if (!k)
			return -1;
		for (; k < 3; k++)
			frac *= 10;
	}
	int64_t offset = 0; /* minutes east of UTC */
	if (p < end && (*p == 'Z' || *p == 'z'))
		p++;
	else if (p < end && (*p == '+' || *p == '-')) {
		int sign = *p++ == '-' ? -1 : 1, oh, om;
		if (digits(&p, end, 2, &oh) || p >= end || *p++ != ':' || digits(&p, end, 2, &om))
			return -1;
		offset = sign * (oh * 60 + om);
	} else
		return -1;
	if (used)
		*used = (size_t)(p - s);
	int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - offset * 60;
	*ms = secs * 1000 + frac;
	return 0;
}

int berth_duration_parse(const char *s, int64_t *ms, berth_error **err)
{
	static const struct {
		const char *unit;
		int64_t ms;
	} units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}};
	const char *p = s ? s : "";
	int64_t total = 0;
	bool any = false;
	*ms = 0;
	while (*p) {
		if (*p < '0' || *p > '9')
			goto bad;
		int64_t v = 0;
		for (; *p >= '0' && *p <= '9'; p++) {
			v = v * 10 + (*p - '0');
			if (v > BERTH_DURATION_MAX_MS)
				goto big;
		}
		size_t k = 0, len = 0;
		for (size_t i = 0; i < BERTH_ARRAY_SIZE(units); i++) {
			size_t ul = strlen(units[i].unit);
			/* the longest unit that matches: "ms" before "m" */
			if (!strncmp(p, units[i].unit, ul) && ul > len && (p[ul] < 'a' || p[ul] > 'z'))
				k = i, len = ul;
		}
		if (!len && (*p || any))
			goto bad;
		int64_t unit = len ? units[k].ms : 1000; /* whole seconds alone */
		if (v > BERTH_DURATION_MAX_MS / unit || (total += v * unit) > BERTH_DURATION_MAX_MS)
			goto big;
		p += len;
		any = true;
	}
	if (!any)
		goto bad;
	*ms = total;
	return 0;
bad:
	return berth_fail(err, BERTH_EARG, "\"%s\" is not a duration: a number and a unit (ms, s, m, h, d), "
			  "one or more (\"5s\", \"2m\", \"1h30m\"), or whole seconds", s ? s : "");
big:
	return berth_fail(err, BERTH_EARG, "\"%s\" is over the longest duration, 400 days", s ? s : "");
}
