/*
 * fuzz_quantity.c - libFuzzer target for berth/quantity.h.
 *
 * The input is one quantity, or two separated by '|'. Each is parsed and
 * checked against an independent reference written here the slow way: the
 * upstream grammar as a plain matcher, and the value computed by doubling a
 * whole array of decimal digits. Then:
 *   - the parse succeeds exactly when the reference grammar accepts the
 *     input, and then fails with -BERTH_ERANGE exactly when the reference
 *     value exceeds 2^63-1 units; otherwise the value is the reference's;
 *   - the canonical form re-parses to the same value, and is a fixed point
 *     of format(parse()) (at once, or after one round for binary values);
 *   - a failure's message quotes the input in printable ASCII;
 *   - add, mul, ceil, cmp, milli and value agree with 128-bit arithmetic.
 * Any disagreement abort()s.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "berth/quantity.h"

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

#define NANO 1000000000
#define LIMIT ((u128)INT64_MAX * NANO)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(c) do { if (!(c)) abort(); } while (0)

/* ---- the reference ------------------------------------------------------- */

struct ref {
	bool neg;
	const char *ip, *fp;  /* integer and fraction digits */
	size_t ni, nf;
	long long exp10;      /* clamped to +-10^12 */
	int bin;              /* 0, 10, ... 60 */
	enum berth_quantity_format format;
};

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The upstream grammar, less numbers without digits. */
static bool ref_syntax(struct ref *r, const char *s, size_t len)
{
	static const char *const dec[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
	static const int dec_exp[] = {-9, -6, -3, 0, 3, 6, 9, 12, 15, 18};
	static const char *const bin[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
	size_t i = 0, sl;
	const char *suf;

	memset(r, 0, sizeof(*r));
	if (i < len && (s[i] == '+' || s[i] == '-'))
		r->neg = s[i++] == '-';
	r->ip = s + i;
	while (i < len && digit(s[i]))
		i++;
	r->ni = (size_t)(s + i - r->ip);
	r->fp = s + i;
	if (i < len && s[i] == '.') {
		r->fp = s + ++i;
		while (i < len && digit(s[i]))
			i++;
		r->nf = (size_t)(s + i - r->fp);
	}
	if (r->ni + r->nf == 0)
		return false;
	suf = s + i;
	sl = len - i;
	for (size_t k = 0; k < sizeof(dec) / sizeof(dec[0]); k++) {
		if (strlen(dec[k]) == sl && memcmp(suf, dec[k], sl) == 0) {
			r->exp10 = dec_exp[k];
			r->format = BERTH_QUANTITY_DECIMAL_SI;
			return true;
		}
	}
	for (size_t k = 0; k < sizeof(bin) / sizeof(bin[0]); k++) {
		if (sl == 2 && memcmp(suf, bin[k], 2) == 0) {
			r->bin = 10 * (int)(k + 1);
			r->format = BERTH_QUANTITY_BINARY_SI;
			return true;
		}
	}
	if (sl >= 2 && (suf[0] == 'e' || suf[0] == 'E')) {
		size_t j = 1;
		bool eneg = false;
		long long e = 0;

		if (suf[j] == '+' || suf[j] == '-')
			eneg = suf[j++] == '-';
		if (j == sl)
			return false;
		for (; j < sl; j++) {
			if (!digit(suf[j]))
				return false;
			if (e < 1000000000000LL)
				e = e * 10 + (suf[j] - '0');
		}
		r->exp10 = eneg ? -e : e;
		r->format = BERTH_QUANTITY_DECIMAL_EXP;
		return true;
	}
	return false;
}

/*
 * The value in nanos, rounded up away from zero: 1 when in range, with *v
 * set; 0 when the magnitude exceeds LIMIT.
 */
static int ref_value(const struct ref *r, i128 *v)
{
	size_t n = r->ni + r->nf, cap = n + 24, start = 24, len;
	unsigned char *d = calloc(cap, 1);
	long long p = r->exp10 - (long long)r->nf + 9;
	u128 m = 0;
	bool up = false;
	int ok = 1;

	REQUIRE(d);
	for (size_t i = 0; i < n; i++)
		d[start + i] = (unsigned char)((i < r->ni ? r->ip[i] : r->fp[i - r->ni]) - '0');
	for (int b = 0; b < r->bin; b++) {  /* double, bin times */
		unsigned carry = 0;
		for (size_t i = cap; i-- > start;) {
			unsigned t = d[i] * 2u + carry;
			d[i] = (unsigned char)(t % 10);
			carry = t / 10;
		}
		if (carry)
			d[--start] = (unsigned char)carry;
	}
	while (start < cap && d[start] == 0)
		start++;
	len = cap - start;
	if (len == 0) {
		*v = 0;
		free(d);
		return 1;
	}
	if (p >= 0) {
		if ((long long)len + p > 29) {
			ok = 0;
		} else {
			for (size_t i = 0; i < len; i++)
				m = m * 10 + d[start + i];
			for (long long i = 0; i < p; i++)
				m *= 10;
		}
	} else if ((long long)len <= -p) {
		m = 1;
	} else {
		size_t keep = len - (size_t)-p;
		if (keep > 29) {
			ok = 0;
		} else {
			for (size_t i = 0; i < keep; i++)
				m = m * 10 + d[start + i];
			for (size_t i = keep; i < len; i++)
				up |= d[start + i] != 0;
			m += up;
		}
	}
	free(d);
	if (!ok || m > LIMIT)
		return 0;
	*v = r->neg ? -(i128)m : (i128)m;
	return 1;
}

/* ---- checks -------------------------------------------------------------- */

static i128 nanos_of(const berth_quantity *q)
{
	return (i128)q->units * NANO + q->nanos;
}

static u128 mag(i128 v)
{
	return v < 0 ? -(u128)v : (u128)v;
}

static bool normalised(const berth_quantity *q)
{
	return q->nanos > -NANO && q->nanos < NANO &&
	       (q->units == 0 || q->nanos == 0 || (q->units < 0) == (q->nanos < 0)) &&
	       mag(nanos_of(q)) <= LIMIT;
}

static void check_message(const char *msg, const char *s, size_t len, int ret)
{
	REQUIRE(msg[0] == '"');
	for (const char *p = msg; *p; p++)
		REQUIRE(*p >= 0x20 && *p < 0x7f);
	if (ret == -BERTH_ERANGE)
		REQUIRE(strstr(msg, "\" is out of range (the ") != NULL);
	else
		REQUIRE(strstr(msg, "\" is not a quantity: ") != NULL);
	/* the input's first byte, when plain, is quoted first */
	if (len > 0 && s[0] > 0x20 && s[0] < 0x7f && s[0] != '"' && s[0] != '\\')
		REQUIRE(msg[1] == s[0]);
}

/*
 * The canonical form c of q has the shape upstream gives it: "0" for zero,
 * else a mantissa without leading zeros and a suffix such that
 *   - decimal (SI suffix or e<exp>): the exponent is a multiple of 3 and the
 *     mantissa has no factor 1000 left (a decimal exponent is never "e0");
 *   - binary (Ki..Ei, or none for a whole number of at least 1024): no
 *     factor 1024 left, unless the mantissa is below 1024;
 *   - a binary value prints in decimal exactly when it is below 1024 in
 *     magnitude or not whole.
 */
static void check_shape(const berth_quantity *q, const char *c, size_t n)
{
	static const char *const dec[] = {"n", "u", "m", "k", "M", "G", "T", "P", "E"};
	static const char *const bin[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
	i128 v = nanos_of(q);
	size_t i = 0, sl;
	const char *suf;
	u128 m = 0;
	int kind = 0; /* 0 none, 1 decimal SI, 2 binary, 3 exponent */
	bool whole = v % NANO == 0, small = mag(v) < (u128)1024 * NANO;

	if (v == 0) {
		REQUIRE(n == 1 && c[0] == '0');
		return;
	}
	if (c[i] == '-')
		i++;
	REQUIRE((v < 0) == (i == 1));
	REQUIRE(i < n && c[i] >= '1' && c[i] <= '9');
	for (; i < n && digit(c[i]); i++)
		m = m * 10 + (u128)(c[i] - '0');
	suf = c + i;
	sl = n - i;
	for (size_t k = 0; k < sizeof(dec) / sizeof(dec[0]); k++)
		if (sl == 1 && suf[0] == dec[k][0])
			kind = 1;
	for (size_t k = 0; k < sizeof(bin) / sizeof(bin[0]); k++)
		if (sl == 2 && memcmp(suf, bin[k], 2) == 0)
			kind = 2;
	if (sl >= 2 && suf[0] == 'e') {
		long e = 0;
		size_t j = 1;
		bool neg = suf[1] == '-';

		j += neg;
		REQUIRE(j < sl && suf[j] >= '1' && suf[j] <= '9');
		for (; j < sl; j++) {
			REQUIRE(digit(suf[j]));
			e = e * 10 + (suf[j] - '0');
		}
		REQUIRE(e % 3 == 0 && e <= 18 && (!neg || e <= 9));
		kind = 3;
	}
	REQUIRE(sl == 0 || kind != 0);

	switch (q->format) {
	case BERTH_QUANTITY_DECIMAL_SI:
		REQUIRE(kind == 0 || kind == 1);
		break;
	case BERTH_QUANTITY_DECIMAL_EXP:
		REQUIRE(kind == 0 || kind == 3);
		break;
	case BERTH_QUANTITY_BINARY_SI:
		if (small || !whole) {
			REQUIRE(kind == 0 || kind == 1);
		} else {
			REQUIRE(kind == 0 || kind == 2);
			REQUIRE(m < 1024 || m % 1024 != 0);
			return;
		}
		break;
	}
	REQUIRE(m % 1000 != 0 || (kind == 1 && suf[0] == 'E'));
}

/* Parses one quantity and checks it against the reference; 1 if valid. */
static int one(berth_quantity *q, const char *s, size_t len)
{
	char msg[512], canon[BERTH_QUANTITY_STR_MAX], canon2[BERTH_QUANTITY_STR_MAX],
		canon3[BERTH_QUANTITY_STR_MAX];
	berth_quantity r = {0, 0, BERTH_QUANTITY_DECIMAL_SI}, r2;
	berth_error *err = NULL;
	struct ref ref;
	bool syntax = ref_syntax(&ref, s, len);
	i128 want = 0;
	int in_range = syntax ? ref_value(&ref, &want) : 0;
	int ret = berth_quantity_parse_message(q, s, len, msg, sizeof(msg));
	size_t n, n2;

	if (!syntax) {
		REQUIRE(ret == -BERTH_EQUANTITY);
	} else if (!in_range) {
		REQUIRE(ret == -BERTH_ERANGE);
	} else {
		REQUIRE(ret == 0);
	}
	if (ret) {
		check_message(msg, s, len, ret);
		/* the same through an error object */
		REQUIRE(berth_quantity_parse(&r, s, len, &err) == ret);
		REQUIRE(berth_error_count(err) == 1);
		REQUIRE(strcmp(berth_error_get(err, 0)->message, msg) == 0);
		berth_error_free(err);
		return 0;
	}

	/* the value and the format are the reference's */
	REQUIRE(normalised(q));
	REQUIRE(nanos_of(q) == want);
	if (ref.format == BERTH_QUANTITY_BINARY_SI && want != 0 && mag(want) < NANO)
		REQUIRE(q->format == BERTH_QUANTITY_DECIMAL_SI);
	else
		REQUIRE(q->format == ref.format);

	/*
	 * The canonical form reads back as the same value. Not always as the
	 * same form: as upstream, a binary value that is not a multiple of
	 * 1024 prints without a suffix and reads back as decimal ("312.5Ki" ->
	 * "320000" -> "320k"); from there on the form is a fixed point.
	 */
	n = berth_quantity_format(q, canon, sizeof(canon));
	REQUIRE(n > 0 && n < sizeof(canon) && strlen(canon) == n);
	REQUIRE(berth_quantity_parse_message(&r, canon, n, msg, sizeof(msg)) == 0);
	REQUIRE(berth_quantity_cmp(q, &r) == 0);
	check_shape(q, canon, n);
	if (q->format != BERTH_QUANTITY_BINARY_SI) {
		REQUIRE(berth_quantity_format(&r, canon2, sizeof(canon2)) == n);
		REQUIRE(strcmp(canon, canon2) == 0);
	}
	n2 = berth_quantity_format(&r, canon2, sizeof(canon2));
	REQUIRE(berth_quantity_parse_message(&r2, canon2, n2, msg, sizeof(msg)) == 0);
	REQUIRE(berth_quantity_cmp(q, &r2) == 0);
	REQUIRE(berth_quantity_format(&r2, canon3, sizeof(canon3)) == n2);
	REQUIRE(strcmp(canon2, canon3) == 0);
	/* truncation as snprintf */
	REQUIRE(berth_quantity_format(q, canon2, 3) == n);
	REQUIRE(strlen(canon2) == (n < 2 ? n : 2) && memcmp(canon2, canon, strlen(canon2)) == 0);
	/* zero is "0", and only zero */
	REQUIRE((want == 0) == (strcmp(canon, "0") == 0));
	return 1;
}

static i128 ceil_div(i128 v, i128 d)
{
	return v / d + (v % d > 0);
}

static void arithmetic(const berth_quantity *a, const berth_quantity *b)
{
	i128 va = nanos_of(a), vb = nanos_of(b), p, want;
	berth_quantity out, sentinel = {42, 7, BERTH_QUANTITY_DECIMAL_EXP};
	int c = berth_quantity_cmp(a, b), ret;

	REQUIRE(c == (va > vb) - (va < vb));
	REQUIRE(berth_quantity_cmp(b, a) == -c);
	REQUIRE(berth_quantity_sign(a) == (va > 0) - (va < 0));
	REQUIRE(berth_quantity_is_integer(a) == (va % NANO == 0));

	out = sentinel;
	ret = berth_quantity_add(&out, a, b);
	if (mag(va + vb) > LIMIT) {
		REQUIRE(ret == -BERTH_ERANGE && out.units == 42 && out.nanos == 7);
	} else {
		REQUIRE(ret == 0 && normalised(&out) && nanos_of(&out) == va + vb);
		REQUIRE(out.format == (va == 0 ? b->format : a->format));
	}

	out = sentinel;
	ret = berth_quantity_mul(&out, a, b);
	if (__builtin_mul_overflow(va, vb, &p)) {
		REQUIRE(ret == -BERTH_ERANGE);
	} else {
		want = p / NANO + (p % NANO > 0) - (p % NANO < 0);
		if (mag(want) > LIMIT) {
			REQUIRE(ret == -BERTH_ERANGE && out.units == 42);
		} else {
			REQUIRE(ret == 0 && normalised(&out) && nanos_of(&out) == want &&
				out.format == a->format);
			/* exact when the product has no dropped digits */
			if (p % NANO == 0)
				REQUIRE((i128)nanos_of(&out) * NANO == p);
		}
	}

	REQUIRE(berth_quantity_ceil(&out, a) == 0);
	REQUIRE(normalised(&out) && out.nanos == 0 && out.format == a->format);
	REQUIRE(nanos_of(&out) >= va && nanos_of(&out) - va < NANO);

	want = ceil_div(va, NANO / 1000);
	REQUIRE(berth_quantity_milli(a) == (want > INT64_MAX ? INT64_MAX :
					    want < INT64_MIN ? INT64_MIN : (int64_t)want));
	REQUIRE(berth_quantity_value(a) == (int64_t)ceil_div(va, NANO));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	const char *bar = memchr(s, '|', size);
	berth_quantity a, b;
	int oka, okb;

	if (!bar)
		return one(&a, s, size) ? (arithmetic(&a, &a), 0) : 0;
	oka = one(&a, s, (size_t)(bar - s));
	okb = one(&b, bar + 1, size - (size_t)(bar - s) - 1);
	if (oka && okb) {
		arithmetic(&a, &b);
		arithmetic(&b, &a);
	}
	return 0;
}
