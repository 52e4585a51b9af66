/*
 * quantity.c - exact Kubernetes resource.Quantity: parsing, canonical form,
 * arithmetic. No floating point: a value is held as a 128-bit count of
 * nanounits while computing, which holds any valid quantity (at most
 * (2^63-1) * 10^9 < 2^93 nanos) and any sum or ratio check of two of them.
 *
 * Parsing never allocates: the digits of the input are walked in place, so
 * an input of any length (thousands of digits, an exponent of a billion
 * digits) is handled exactly in time linear in its length.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/internal.h"
#include "berth/quantity.h"

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

#define NANO 1000000000
/* The largest magnitude, in nanounits: (2^63-1) whole units. */
#define LIMIT ((u128)INT64_MAX * NANO)
/* Exponents are clamped here while read: far beyond any meaningful value. */
#define EXP_CLAMP 1000000000000000LL
/* How much of an input, and of a suffix, an error message shows. */
#define SHOW_INPUT 40
#define SHOW_SUFFIX 16

static const struct {
	const char *name;
	int exp;
} dec_suffixes[] = {
	{"n", -9}, {"u", -6}, {"m", -3}, {"", 0}, {"k", 3},
	{"M", 6}, {"G", 9}, {"T", 12}, {"P", 15}, {"E", 18},
};

/* Index i is 2^(10*i). */
static const char *const bin_suffixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

static i128 to_nanos(const berth_quantity *q)
{
	return (i128)q->units * NANO + q->nanos;
}

static u128 magnitude(i128 v)
{
	return v < 0 ? -(u128)v : (u128)v;
}

/* v must be within +-LIMIT. */
static berth_quantity from_nanos(i128 v, enum berth_quantity_format format)
{
	berth_quantity q;
	q.units = (int64_t)(v / NANO);
	q.nanos = (int32_t)(v % NANO);
	q.format = format;
	return q;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static char ascii_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool equals(const char *s, size_t len, const char *name)
{
	return strlen(name) == len && memcmp(s, name, len) == 0;
}

static bool equals_nocase(const char *s, size_t len, const char *name)
{
	if (strlen(name) != len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (ascii_lower(s[i]) != ascii_lower(name[i]))
			return false;
	return true;
}

/* ---- messages ---------------------------------------------------------- */

/* Room for a quoted, escaped text of at most `show` bytes. */
#define QUOTED_SIZE(show) ((show) * 4 + 8)

/*
 * Writes s (len bytes) double-quoted into dst, escaping quotes, backslashes
 * and every byte that is not printable ASCII (as \n, \t, \r or \xNN), and
 * showing at most `show` bytes of s, then "...".
 */
static void quote(char *dst, size_t cap, const char *s, size_t len, size_t show)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

#define PUT(c) do { if (o + 1 < cap) dst[o++] = (c); } while (0)
	PUT('"');
	for (size_t i = 0; i < len && i < show; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '"': PUT('\\'); PUT('"'); break;
		case '\\': PUT('\\'); PUT('\\'); break;
		case '\n': PUT('\\'); PUT('n'); break;
		case '\t': PUT('\\'); PUT('t'); break;
		case '\r': PUT('\\'); PUT('r'); break;
		default:
			if (c >= 0x20 && c < 0x7f) {
				PUT((char)c);
			} else {
				PUT('\\');
				PUT('x');
				PUT(hex[c >> 4]);
				PUT(hex[c & 15]);
			}
		}
	}
	if (len > show) {
		PUT('.');
		PUT('.');
		PUT('.');
	}
	PUT('"');
#undef PUT
	if (cap)
		dst[o] = '\0';
}

/* The reason an unknown suffix is wrong, with a hint for a wrong case. */
static void unknown_suffix(char *reason, size_t cap, const char *suf, size_t len)
{
	char q[QUOTED_SIZE(SHOW_SUFFIX)];
	const char *hints[4];
	size_t nhints = 0;

	quote(q, sizeof(q), suf, len, SHOW_SUFFIX);
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(dec_suffixes); i++)
		if (dec_suffixes[i].name[0] && equals_nocase(suf, len, dec_suffixes[i].name))
			hints[nhints++] = dec_suffixes[i].name;
	for (size_t i = 1; i < BERTH_ARRAY_SIZE(bin_suffixes) && nhints < 4; i++) {
		const char *b = bin_suffixes[i];
		if (equals_nocase(suf, len, b) ||
		    (len == 1 && ascii_lower(suf[0]) == ascii_lower(b[0])))
			hints[nhints++] = b;
	}
	if (nhints == 1)
		snprintf(reason, cap, "unknown suffix %s (did you mean \"%s\"?)", q, hints[0]);
	else if (nhints >= 2)
		snprintf(reason, cap, "unknown suffix %s (did you mean \"%s\" or \"%s\"?)", q,
			 hints[0], hints[1]);
	else
		snprintf(reason, cap,
			 "unknown suffix %s (use one of n u m k M G T P E, Ki Mi Gi Ti Pi Ei, "
			 "or an exponent like e3)", q);
}

/* ---- parsing ------------------------------------------------------------ */

/* A syntactically valid quantity, before its value is computed. */
struct number {
	bool neg;
	const char *ip;  /* integer digits */
	size_t ni;
	const char *fp;  /* fraction digits */
	size_t nf;
	int64_t exp10;   /* decimal exponent of the suffix, clamped */
	unsigned bin;    /* binary exponent of the suffix: 0, 10, ... 60 */
	enum berth_quantity_format format;
};

static unsigned digit_at(const struct number *n, size_t i)
{
	return (unsigned)((i < n->ni ? n->ip[i] : n->fp[i - n->ni]) - '0');
}

/*
 * Reads the suffix (s, len): a decimal or binary SI suffix or an exponent.
 * Returns 0, or -BERTH_EQUANTITY with the reason written.
 */
static int parse_suffix(struct number *n, const char *s, size_t len, char *reason, size_t cap)
{
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(dec_suffixes); i++) {
		if (equals(s, len, dec_suffixes[i].name)) {
			n->exp10 = dec_suffixes[i].exp;
			n->format = BERTH_QUANTITY_DECIMAL_SI;
			return 0;
		}
	}
	for (size_t i = 1; i < BERTH_ARRAY_SIZE(bin_suffixes); i++) {
		if (equals(s, len, bin_suffixes[i])) {
			n->bin = 10 * (unsigned)i;
			n->format = BERTH_QUANTITY_BINARY_SI;
			return 0;
		}
	}
	switch (s[0]) {
	case '.':
		snprintf(reason, cap, "more than one decimal point");
		return -BERTH_EQUANTITY;
	case '+': case '-':
		snprintf(reason, cap, "a sign may only come first");
		return -BERTH_EQUANTITY;
	case '_': case ',': case '\'':
		snprintf(reason, cap, "digit separators are not allowed");
		return -BERTH_EQUANTITY;
	case 'e': case 'E': {
		size_t i = 1;
		bool signed_exp = false, neg = false;
		int64_t e = 0;

		if (i < len && (s[i] == '+' || s[i] == '-')) {
			neg = s[i] == '-';
			signed_exp = true;
			i++;
		}
		if (i == len || (!is_digit(s[i]) && signed_exp)) {
			snprintf(reason, cap, "exponent has no digits");
			return -BERTH_EQUANTITY;
		}
		if (!is_digit(s[i]))
			break; /* "eGi": not an exponent at all */
		for (; i < len && is_digit(s[i]); i++) {
			e = e * 10 + (s[i] - '0');
			if (e > EXP_CLAMP)
				e = EXP_CLAMP;
		}
		if (i < len) {
			char q[QUOTED_SIZE(SHOW_SUFFIX)];
			quote(q, sizeof(q), s, len, SHOW_SUFFIX);
			snprintf(reason, cap,
				 "bad exponent %s (only digits may follow e, as in e3 or e-6, "
				 "and no other suffix)", q);
			return -BERTH_EQUANTITY;
		}
		n->exp10 = neg ? -e : e;
		n->format = BERTH_QUANTITY_DECIMAL_EXP;
		return 0;
	}
	default:
		break;
	}
	unknown_suffix(reason, cap, s, len);
	return -BERTH_EQUANTITY;
}

/* Reads the syntax of s. Returns 0, or -BERTH_EQUANTITY with the reason. */
static int parse_syntax(struct number *n, const char *s, size_t len, char *reason, size_t cap)
{
	size_t pos = 0;

	memset(n, 0, sizeof(*n));
	if (len == 0) {
		snprintf(reason, cap, "it is empty");
		return -BERTH_EQUANTITY;
	}
	for (size_t i = 0; i < len; i++) {
		switch (s[i]) {
		case ' ': case '\t': case '\n': case '\r': case '\v': case '\f':
			snprintf(reason, cap, "spaces are not allowed");
			return -BERTH_EQUANTITY;
		case '\0':
			snprintf(reason, cap, "it contains a NUL byte");
			return -BERTH_EQUANTITY;
		default:
			break;
		}
	}
	if (s[pos] == '+' || s[pos] == '-')
		n->neg = s[pos++] == '-';
	if (pos < len && (s[pos] == '+' || s[pos] == '-')) {
		snprintf(reason, cap, "more than one sign");
		return -BERTH_EQUANTITY;
	}
	n->ip = s + pos;
	while (pos < len && is_digit(s[pos]))
		pos++;
	n->ni = (size_t)(s + pos - n->ip);
	n->fp = s + pos;
	if (pos < len && s[pos] == '.') {
		n->fp = s + ++pos;
		while (pos < len && is_digit(s[pos]))
			pos++;
		n->nf = (size_t)(s + pos - n->fp);
	}
	if (n->ni + n->nf == 0) {
		snprintf(reason, cap, "it has no digits");
		return -BERTH_EQUANTITY;
	}
	if (pos < len && (s[pos] == 'x' || s[pos] == 'X') && n->ni == 1 && n->ip[0] == '0' &&
	    n->nf == 0 && n->fp == n->ip + 1) {
		snprintf(reason, cap, "only decimal numbers are allowed");
		return -BERTH_EQUANTITY;
	}
	return parse_suffix(n, s + pos, len - pos, reason, cap);
}

/*
 * The value of n in nanounits, rounded up (away from zero) to a whole
 * nanounit: digits * 10^(exp10 - nf + 9) * 2^bin. The digits that fall
 * below a nanounit are multiplied by 2^bin from the last one up, as by
 * hand, keeping only the carry and whether a dropped digit was nonzero;
 * those above are read as a number, stopping as soon as it is too large.
 * Returns 0, or -BERTH_ERANGE when the magnitude exceeds LIMIT.
 */
static int number_value(const struct number *n, u128 *out)
{
	size_t nd = n->ni + n->nf, first_frac;
	i128 cut = (i128)nd + n->exp10 - (i128)n->nf + 9; /* digits above 1n */
	u128 mul = (u128)1 << n->bin, carry = 0, v = 0;
	bool dropped = false;

	first_frac = cut <= 0 ? 0 : cut >= (i128)nd ? nd : (size_t)cut;
	for (size_t i = nd; i > first_frac; i--) {
		u128 t = digit_at(n, i - 1) * mul + carry;
		dropped |= t % 10 != 0;
		carry = t / 10;
	}
	/*
	 * When cut < 0, zeros lie between the nano position and the first
	 * digit, and the carry would have to run through them; but only a
	 * negative exponent makes cut negative, and an exponent never comes
	 * with a binary suffix, so then mul is 1 and carry 0.
	 */
	for (size_t i = 0; i < first_frac; i++) {
		v = v * 10 + digit_at(n, i);
		if (v > LIMIT)
			return -BERTH_ERANGE;
	}
	for (i128 k = (i128)nd; v && k < cut; k++) {
		v *= 10;
		if (v > LIMIT)
			return -BERTH_ERANGE;
	}
	if (v > LIMIT >> n->bin)
		return -BERTH_ERANGE;
	v = (v << n->bin) + carry + dropped;
	if (v > LIMIT)
		return -BERTH_ERANGE;
	*out = v;
	return 0;
}

/* Parses s; on error writes the reason (a -BERTH_EQUANTITY) and sets *neg. */
static int parse(berth_quantity *out, const char *s, size_t len, bool *neg, char *reason,
		 size_t cap)
{
	struct number n;
	enum berth_quantity_format format;
	u128 v;
	int ret;

	*neg = len > 0 && s[0] == '-';
	ret = parse_syntax(&n, s, len, reason, cap);
	if (ret)
		return ret;
	ret = number_value(&n, &v);
	if (ret)
		return ret;
	format = n.format;
	/* as upstream: a binary fraction of one unit is shown in decimal */
	if (format == BERTH_QUANTITY_BINARY_SI && v > 0 && v < NANO)
		format = BERTH_QUANTITY_DECIMAL_SI;
	*out = from_nanos(n.neg ? -(i128)v : (i128)v, format);
	return 0;
}

/* The quantities a thread read last, by their text (the short ones): a
 * spec's few quantities ("500m", "4Gi") are mostly the same as the last
 * spec's, and reading one costs more than finding it. Only what was read
 * without a problem is kept. */
struct read_text {
	uint8_t len; /* 0: an empty place (the empty text is no quantity) */
	char text[23];
	berth_quantity q;
};
static _Thread_local struct read_text read_texts[32];

int berth_quantity_parse_message(berth_quantity *out, const char *s, size_t len,
				 char *msg, size_t msglen)
{
	char reason[256], q[QUOTED_SIZE(SHOW_INPUT)];
	berth_quantity tmp;
	bool neg;
	int ret;

	if (!s)
		len = 0;
	struct read_text *r = NULL;
	if (len > 0 && len <= sizeof(r->text)) {
		uint64_t h = (uint64_t)len * 31 + (unsigned char)s[0] * 7 + (unsigned char)s[len - 1];
		h = (h ^ (unsigned char)s[len / 2] << 16) * UINT64_C(0x9E3779B97F4A7C15);
		r = &read_texts[h >> 59];
		if (r->len == len && memcmp(r->text, s, len) == 0) {
			*out = r->q;
			if (msg && msglen)
				msg[0] = '\0';
			return 0;
		}
	}
	ret = parse(&tmp, s, len, &neg, reason, sizeof(reason));
	if (ret == 0) {
		if (r) {
			r->len = (uint8_t)len;
			memcpy(r->text, s, len);
			r->q = tmp;
		}
		*out = tmp;
		if (msg && msglen)
			msg[0] = '\0';
		return 0;
	}
	if (!msg || !msglen)
		return ret;
	quote(q, sizeof(q), s, len, SHOW_INPUT);
	if (ret == -BERTH_ERANGE)
		snprintf(msg, msglen, "%s is out of range (the %s quantity is %s%" PRId64 ")", q,
			 neg ? "smallest" : "largest", neg ? "-" : "", INT64_MAX);
	else
		snprintf(msg, msglen, "%s is not a quantity: %s", q, reason);
	return ret;
}

int berth_quantity_parse(berth_quantity *out, const char *s, size_t len, berth_error **err)
{
	char msg[512];
	int ret = berth_quantity_parse_message(out, s, len, msg, sizeof(msg));

	if (ret == 0 || !err)
		return ret;
	return berth_fail(err, (berth_code)-ret, "%s", msg);
}

/* ---- canonical form ----------------------------------------------------- */

/* Writes the decimal digits of v at p; returns their count. */
static size_t put_u128(char *p, u128 v)
{
	char tmp[40];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

static const char *dec_suffix(int exp)
{
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(dec_suffixes); i++)
		if (dec_suffixes[i].exp == exp)
			return dec_suffixes[i].name;
	return NULL;
}

/* Writes the canonical form into p (at least 64 bytes); returns its length. */
static size_t canonical(const berth_quantity *q, char *p)
{
	i128 v = to_nanos(q);
	u128 m = magnitude(v);
	enum berth_quantity_format format = q->format;
	size_t n = 0;
	int exp = -9;
	const char *suffix;

	if (v == 0) {
		p[0] = '0';
		p[1] = '\0';
		return 1;
	}
	if (v < 0)
		p[n++] = '-';
	if (format != BERTH_QUANTITY_DECIMAL_SI && format != BERTH_QUANTITY_BINARY_SI &&
	    format != BERTH_QUANTITY_DECIMAL_EXP)
		format = BERTH_QUANTITY_DECIMAL_EXP; /* as upstream, for an unknown format */

	if (format == BERTH_QUANTITY_BINARY_SI) {
		if (m < (u128)1024 * NANO || m % NANO != 0) {
			format = BERTH_QUANTITY_DECIMAL_SI;
		} else {
			u128 u = m / NANO;
			size_t k = 0;

			while (k + 1 < BERTH_ARRAY_SIZE(bin_suffixes) && u >= 1024 && u % 1024 == 0) {
				u /= 1024;
				k++;
			}
			n += put_u128(p + n, u);
			memcpy(p + n, bin_suffixes[k], strlen(bin_suffixes[k]) + 1);
			return n + strlen(bin_suffixes[k]);
		}
	}

	while (m % 10 == 0) {
		m /= 10;
		exp++;
	}
	while (exp % 3 != 0) {
		m *= 10;
		exp--;
	}
	n += put_u128(p + n, m);
	suffix = format == BERTH_QUANTITY_DECIMAL_SI ? dec_suffix(exp) : NULL;
	if (suffix) {
		memcpy(p + n, suffix, strlen(suffix) + 1);
		return n + strlen(suffix);
	}
	if (exp == 0) {
		p[n] = '\0';
		return n;
	}
	return n + (size_t)snprintf(p + n, 16, "e%d", exp);
}

/* What canonical() wrote for the last quantities it was given, in a small
 * table a thread (the server renders on several): a run's objects print the
 * same few quantities (its cpu, memory, GPUs) several times each, and each
 * costs 128-bit divisions. A place is kept by the whole of the value. */
struct formatted {
	int64_t units;
	int32_t nanos;
	uint8_t format, len; /* len 0: an empty place (no form is empty) */
	char text[BERTH_QUANTITY_STR_MAX];
};
static _Thread_local struct formatted formatted[32];

size_t berth_quantity_format(const berth_quantity *q, char *buf, size_t len)
{
	char tmp[64];
	size_t n;
	uint64_t h = ((uint64_t)q->units ^ (uint64_t)(uint32_t)q->nanos << 20 ^ (uint64_t)q->format << 40) *
		     UINT64_C(0x9E3779B97F4A7C15);
	struct formatted *f = &formatted[h >> 59];
	if (f->len && f->units == q->units && f->nanos == q->nanos && f->format == (unsigned)q->format) {
		n = f->len;
		memcpy(tmp, f->text, n + 1);
	} else {
		n = canonical(q, tmp);
		if (n > 0 && n < sizeof(f->text) && (unsigned)q->format <= UINT8_MAX) {
			f->units = q->units;
			f->nanos = q->nanos;
			f->format = (uint8_t)q->format;
			f->len = (uint8_t)n;
			memcpy(f->text, tmp, n + 1);
		}
	}

	if (buf && len) {
		size_t c = n < len ? n : len - 1;
		memcpy(buf, tmp, c);
		buf[c] = '\0';
	}
	return n;
}

/* ---- values and arithmetic ---------------------------------------------- */

berth_quantity berth_quantity_from_int(int64_t units, enum berth_quantity_format format)
{
	berth_quantity q = {units, 0, format};
	return q;
}

int berth_quantity_cmp(const berth_quantity *a, const berth_quantity *b)
{
	i128 x = to_nanos(a), y = to_nanos(b);
	return (x > y) - (x < y);
}

int berth_quantity_sign(const berth_quantity *q)
{
	i128 v = to_nanos(q);
	return (v > 0) - (v < 0);
}

int berth_quantity_is_integer(const berth_quantity *q)
{
	return to_nanos(q) % NANO == 0;
}

int berth_quantity_add(berth_quantity *out, const berth_quantity *a, const berth_quantity *b)
{
	i128 x = to_nanos(a), sum = x + to_nanos(b);

	if (magnitude(sum) > LIMIT)
		return -BERTH_ERANGE;
	/* upstream Add: a zero receiver takes the format of what is added */
	*out = from_nanos(sum, x == 0 ? b->format : a->format);
	return 0;
}

int berth_quantity_mul(berth_quantity *out, const berth_quantity *q, const berth_quantity *ratio)
{
	i128 p, r;

	/* an overflow means |p| >= 2^127 nanos^2, far above LIMIT * 10^9 */
	if (__builtin_mul_overflow(to_nanos(q), to_nanos(ratio), &p))
		return -BERTH_ERANGE;
	r = p / NANO;
	if (p % NANO)
		r += p < 0 ? -1 : 1;
	if (magnitude(r) > LIMIT)
		return -BERTH_ERANGE;
	*out = from_nanos(r, q->format);
	return 0;
}

/* v / d rounded toward +infinity (d > 0). */
static i128 div_ceil(i128 v, i128 d)
{
	return v / d + (v % d > 0);
}

int berth_quantity_ceil(berth_quantity *out, const berth_quantity *q)
{
	i128 r = div_ceil(to_nanos(q), NANO) * NANO;

	if (magnitude(r) > LIMIT)
		return -BERTH_ERANGE;
	*out = from_nanos(r, q->format);
	return 0;
}

static int64_t saturate(i128 v)
{
	if (v > INT64_MAX)
		return INT64_MAX;
	if (v < INT64_MIN)
		return INT64_MIN;
	return (int64_t)v;
}

int64_t berth_quantity_milli(const berth_quantity *q)
{
	return saturate(div_ceil(to_nanos(q), NANO / 1000));
}

int64_t berth_quantity_value(const berth_quantity *q)
{
	return saturate(div_ceil(to_nanos(q), NANO));
}

/* bytes / base^k for the largest k (up to 6) that divides them exactly */
static size_t format_exact(char *buf, size_t len, int64_t bytes, uint64_t base,
			   const char *const suffix[7])
{
	uint64_t v = bytes < 0 ? 0 : (uint64_t)bytes;
	size_t i = 0;
	while (v && i + 1 < 7 && v % base == 0) {
		v /= base;
		i++;
	}
	int n = snprintf(buf, len, "%" PRIu64 "%s", v, suffix[i]);
	return n < 0 ? 0 : (size_t)n;
}

size_t berth_format_bytes(char *buf, size_t len, int64_t bytes)
{
	static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
	return format_exact(buf, len, bytes, 1024, bin);
}

size_t berth_format_cpu(char *buf, size_t len, int64_t milli)
{
	int n = milli % 1000 ? snprintf(buf, len, "%" PRId64 "m", milli)
			     : snprintf(buf, len, "%" PRId64, milli / 1000);
	return n < 0 ? 0 : (size_t)n;
}

size_t berth_quantity_decimal(const berth_quantity *q, char *buf, size_t len)
{
	i128 v = to_nanos(q);
	u128 m = (u128)(v < 0 ? -v : v);
	uint64_t whole = (uint64_t)(m / NANO), frac = (uint64_t)(m % NANO);
	int digits = 9, n;
	while (frac && frac % 10 == 0) {
		frac /= 10;
		digits--;
	}
	if (frac)
		n = snprintf(buf, len, "%s%" PRIu64 ".%0*" PRIu64, v < 0 ? "-" : "", whole, digits, frac);
	else
		n = snprintf(buf, len, "%s%" PRIu64, v < 0 ? "-" : "", whole);
	return n < 0 ? 0 : (size_t)n;
}

void berth_format_size(char *buf, size_t len, int64_t bytes, int binary)
{
	static const char *const dec[] = {"", "k", "M", "G", "T", "P", "E"};
	if (binary)
		berth_format_bytes(buf, len, bytes);
	else
		format_exact(buf, len, bytes, 1000, dec);
}
