/*
 * test_quantity.c - berth/quantity.h against upstream Kubernetes behaviour
 * (k8s.io/apimachinery/pkg/api/resource), with berth's stricter rejections.
 * Every input is copied into a buffer of exactly its length, so that ASan
 * catches any read past len.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/quantity.h"
#include "base/internal.h"
#include "t.h"

#define NOSTR NULL

/* Parses s (its first len bytes, from an exact-size heap copy). */
static int parse_n(berth_quantity *q, const char *s, size_t len, char *msg, size_t msglen)
{
	char *copy = malloc(len ? len : 1);
	int ret;

	if (!copy)
		abort();
	memcpy(copy, s, len);
	ret = berth_quantity_parse_message(q, copy, len, msg, msglen);
	free(copy);
	return ret;
}

static int parse_s(berth_quantity *q, const char *s, char *msg, size_t msglen)
{
	return parse_n(q, s, strlen(s), msg, msglen);
}

/* The canonical form of q, in a rotating static buffer. */
static const char *fmt(const berth_quantity *q)
{
	static char bufs[4][BERTH_QUANTITY_STR_MAX];
	static int i;
	char *b = bufs[i++ % 4];
	size_t n = berth_quantity_format(q, b, BERTH_QUANTITY_STR_MAX);

	CHECKF(n < BERTH_QUANTITY_STR_MAX, "canonical form too long: %zu", n);
	return b;
}

/* Parses s, which must be valid; the canonical form, or "ERROR: message". */
static berth_quantity must(const char *s)
{
	berth_quantity q = {0, 0, BERTH_QUANTITY_DECIMAL_SI};
	char msg[256];
	int ret = parse_s(&q, s, msg, sizeof(msg));

	CHECKF(ret == 0, "parse \"%s\": %d %s", s, ret, msg);
	return q;
}

/* ---- canonical forms ---------------------------------------------------- */

static const struct {
	const char *in, *out;
} canon_table[] = {
	/* the brief's examples */
	{"0.5", "500m"},
	{"1.5Gi", "1536Mi"},
	{"1e13", "10e12"},
	{"1000M", "1G"},
	{"1500", "1500"},
	{"1500m", "1500m"},
	{"1.5", "1500m"},
	{"100m", "100m"},
	{"0.1", "100m"},
	{"1e3", "1e3"},
	{"1.5e3", "1500"},
	{"1E3", "1e3"},
	{"1k", "1k"},
	{"1000", "1k"},
	{"1000000", "1M"},
	{"12Ki", "12Ki"},
	{"8192", "8192"},
	{"1024Ki", "1Mi"},
	{"1e-10", "1e-9"}, /* decimal exponent format kept, as upstream */
	{"1e-9", "1e-9"},  /* upstream TestQuantityString */
	{"0.000000001", "1n"},
	{"0.0000000001", "1n"},
	{"0.000001", "1u"},
	{"1u", "1u"},
	{"1n", "1n"},
	{"-1", "-1"},
	{"+1", "1"},
	{"1.", "1"},
	{".5", "500m"},
	{"0", "0"},
	{"-0", "0"},
	{"+0", "0"},
	{"00", "0"},
	{"0.0", "0"},
	{"0Gi", "0"},
	{"-0Ki", "0"},
	{"0m", "0"},
	{"0e5", "0"},
	{"1Ei", "1Ei"},
	{"7Ei", "7Ei"},
	{"9223372036854775807", "9223372036854775807"},
	{"-9223372036854775807", "-9223372036854775807"},
	{"9E", "9E"},
	{"32Gi", "32Gi"},
	{"64Gi", "64Gi"},
	{"10Gi", "10Gi"},
	{"350Gi", "350Gi"},
	{"256Mi", "256Mi"},
	{"1.0009765625Ki", "1025"},
	{"0.5Ki", "512"},
	{"-1.5Gi", "-1536Mi"},
	{"1024Mi", "1Gi"},
	/* binary */
	{"1Ki", "1Ki"},
	{"8Ki", "8Ki"},
	{"-1Ki", "-1Ki"},
	{"-1024", "-1024"},
	{"1023Ki", "1023Ki"},
	{"1025Mi", "1025Mi"},
	{"1048576Ki", "1Gi"},
	{"1024Ei", "ERANGE"},
	{"0.5Mi", "512Ki"},
	{"0.05Gi", "53687091200m"},
	{"0.025Ti", "27487790694400m"},
	{"100.035Ki", "102435840m"},
	{".001Ki", "1024m"},
	{".000001Ki", "1024u"},
	{".000000001Ki", "1024n"},
	{".000000000001Ki", "2n"},
	{"-.000000000001Ki", "-2n"},
	{"1536Ki", "1536Ki"},
	{"2048Ki", "2Mi"},
	/* decimal SI, upstream TestQuantityParse / TestQuantityString */
	{"1.G", "1G"},
	{"50k", "50k"},
	{"40T", "40T"},
	{"300T", "300T"},
	{"1E", "1E"},
	{"100.035k", "100035"},
	{"0.0005k", "500m"},
	{"10.035M", "10035k"},
	{"9.01", "9010m"},
	{"8.1k", "8100"},
	{"7.123456M", "7123456"},
	{"6.987654321G", "6987654321"},
	{"5.444T", "5444G"},
	{"40.1T", "40100G"},
	{"2.5P", "2500T"},
	{"1.01E", "1010P"},
	{"1234567M", "1234567M"},
	{"1080m", "1080m"},
	{"1.08", "1080m"},
	{"0.00050k", "500m"},
	{"0.05000", "50m"},
	{"3.001n", "4n"},
	{"0.9n", "1n"},
	{"0.00000012345", "124n"},
	{"0.00000012354", "124n"},
	{"01", "1"},
	{"0001.5000k", "1500"},
	{"-9.01", "-9010m"},
	/* decimal exponent */
	{"1e0", "1"},
	{"1e+3", "1e3"},
	{"1E-3", "1e-3"},
	{"80e-3", "80e-3"},
	{"0.08", "80m"},
	{"300e6", "300e6"},
	{"3e3", "3e3"},
	{"1e18", "1e18"},
	{"1E18", "1e18"},
	{"1e14", "100e12"},
	{"0.5e0", "500e-3"},
	{"0.5e-1", "50e-3"},
	{"0.5e-2", "5e-3"},
	{"1.2e3", "1200"},
	{"1.3E+6", "1300e3"},
	{"1.40e9", "1400e6"},
	{"1.53E12", "1530e9"},
	{"1.7E18", "1700e15"},
	{"1.1E-9", "2e-9"},
	{"0.5e-9", "1e-9"},
	{"-1e-10", "-1e-9"},
	{"1e-0", "1"},
	{"1e0003", "1e3"},
	/* arbitrarily many digits, exactly */
	{"0.000000000000000000000000000000000000000000000000001", "1n"},
	{"-0.000000000000000000000000000000000000000000000000001", "-1n"},
	{"0000000000000000000000000001", "1"},
	{"1.00000000000000000000000000000000000001", "1000000001n"},
	{"-1.00000000000000000000000000000000000001", "-1000000001n"},
	{"1.000000000000000000000000000000000000000000", "1"},
	{"100000000000000000000000000000000000000e-38", "1"},
	{"1000000000000000000000000000000000000000000000000e-40", "100e6"},
	{"9223372036854775806.9999999991", "9223372036854775807"},
	{"9223372036854775806999999999n", "9223372036854775806999999999n"},
	{"-9223372036854775806999999999n", "-9223372036854775806999999999n"},
	{"9223372036854775807n", "9223372036854775807n"},
	{"9.223372036854775807E", "9223372036854775807"},
	{"0.00000000000000000000000000000000000001Ei", "1n"},
	/* huge exponents */
	{"1e-999999999999999999999999999999", "1e-9"},
	{"-1e-99999999999", "-1e-9"},
	{"0e999999999999999999999999999999", "0"},
	{"0.000e99999999", "0"},
	{"1e-4294967296", "1e-9"},
};

static void test_canonical(void)
{
	for (size_t i = 0; i < sizeof(canon_table) / sizeof(canon_table[0]); i++) {
		const char *in = canon_table[i].in, *want = canon_table[i].out;
		berth_quantity q, r;
		char msg[256] = "";
		int ret = parse_s(&q, in, msg, sizeof(msg));

		if (strcmp(want, "ERANGE") == 0) {
			CHECKF(ret == -BERTH_ERANGE, "%s: %d", in, ret);
			continue;
		}
		if (!CHECKF(ret == 0, "%s: %d %s", in, ret, msg))
			continue;
		CHECKF(strcmp(fmt(&q), want) == 0, "%s -> %s, want %s", in, fmt(&q), want);
		CHECKF(q.nanos > -1000000000 && q.nanos < 1000000000 &&
		       (q.units == 0 || q.nanos == 0 || (q.units < 0) == (q.nanos < 0)),
		       "%s: not normalised: %lld %d", in, (long long)q.units, q.nanos);
		/* the canonical form reads back as the same value and form */
		ret = parse_s(&r, want, msg, sizeof(msg));
		CHECKF(ret == 0 && berth_quantity_cmp(&q, &r) == 0 && !strcmp(fmt(&r), want),
		       "%s: %s does not read back: %d %s", in, want, ret, msg);
	}
}

/*
 * As upstream, a binary value that is not a multiple of 1024 prints without
 * a suffix, so it reads back as decimal: the value survives, the form does
 * not ("312.5Ki" -> "320000" -> "320k"), and is a fixed point after that.
 */
static void test_binary_readback(void)
{
	static const struct {
		const char *in, *first, *second;
	} table[] = {
		{"312.5Ki", "320000", "320k"},
		{"1000Ki", "1000Ki", "1000Ki"},
		{"0.9765625Ki", "1k", "1k"},
		{"1.5Ki", "1536", "1536"},
		{"1.953125Ki", "2000", "2k"},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		berth_quantity q = must(table[i].in), r, r2;
		char first[BERTH_QUANTITY_STR_MAX], second[BERTH_QUANTITY_STR_MAX];

		berth_quantity_format(&q, first, sizeof(first));
		CHECKF(strcmp(first, table[i].first) == 0, "%s -> %s", table[i].in, first);
		r = must(first);
		CHECK_INT(berth_quantity_cmp(&q, &r), 0);
		berth_quantity_format(&r, second, sizeof(second));
		CHECKF(strcmp(second, table[i].second) == 0, "%s -> %s", first, second);
		r2 = must(second);
		CHECK_INT(berth_quantity_cmp(&q, &r2), 0);
		CHECK_STR(fmt(&r2), table[i].second);
	}
}

/* ---- exact values ------------------------------------------------------- */

static const struct {
	const char *in;
	int64_t units;
	int32_t nanos;
	enum berth_quantity_format format;
} value_table[] = {
	{"1.5Gi", 1610612736, 0, BERTH_QUANTITY_BINARY_SI},
	{"32Gi", 34359738368, 0, BERTH_QUANTITY_BINARY_SI},
	{"0.5Ki", 512, 0, BERTH_QUANTITY_BINARY_SI},
	{"7Ei", 8070450532247928832, 0, BERTH_QUANTITY_BINARY_SI},
	/* upstream: a binary value below one unit becomes decimal */
	{"0.000000000001Ki", 0, 2, BERTH_QUANTITY_DECIMAL_SI},
	{"-0.000000000001Ki", 0, -2, BERTH_QUANTITY_DECIMAL_SI},
	{"0.5Ki", 512, 0, BERTH_QUANTITY_BINARY_SI},
	{"0.0009765625Ki", 1, 0, BERTH_QUANTITY_BINARY_SI},
	{"0Gi", 0, 0, BERTH_QUANTITY_BINARY_SI},
	{"0", 0, 0, BERTH_QUANTITY_DECIMAL_SI},
	{"-1.5", -1, -500000000, BERTH_QUANTITY_DECIMAL_SI},
	{"1e3", 1000, 0, BERTH_QUANTITY_DECIMAL_EXP},
	{"1E", 1000000000000000000, 0, BERTH_QUANTITY_DECIMAL_SI},
	{"1e-10", 0, 1, BERTH_QUANTITY_DECIMAL_EXP},
	{"-1e-10", 0, -1, BERTH_QUANTITY_DECIMAL_EXP},
	{"0.0000000015", 0, 2, BERTH_QUANTITY_DECIMAL_SI},
	{"1.0000000001", 1, 1, BERTH_QUANTITY_DECIMAL_SI},
	{"-1.0000000001", -1, -1, BERTH_QUANTITY_DECIMAL_SI},
	{"1.999999999", 1, 999999999, BERTH_QUANTITY_DECIMAL_SI},
	{"1.9999999991", 2, 0, BERTH_QUANTITY_DECIMAL_SI},
	{"-1.9999999991", -2, 0, BERTH_QUANTITY_DECIMAL_SI},
	{"9223372036854775807", INT64_MAX, 0, BERTH_QUANTITY_DECIMAL_SI},
	{"-9223372036854775807", -INT64_MAX, 0, BERTH_QUANTITY_DECIMAL_SI},
	{"9223372036854775806.9999999991", INT64_MAX, 0, BERTH_QUANTITY_DECIMAL_SI},
	{"9223372036854775806.999999999", INT64_MAX - 1, 999999999, BERTH_QUANTITY_DECIMAL_SI},
	{"8191.999999999Ki", 8388607, 999998976, BERTH_QUANTITY_BINARY_SI},
	{"1.1Ki", 1126, 400000000, BERTH_QUANTITY_BINARY_SI},
	{"123456789.123456789", 123456789, 123456789, BERTH_QUANTITY_DECIMAL_SI},
	{"1e9", 1000000000, 0, BERTH_QUANTITY_DECIMAL_EXP},
	{"5n", 0, 5, BERTH_QUANTITY_DECIMAL_SI},
	{"4u", 0, 4000, BERTH_QUANTITY_DECIMAL_SI},
	{"3m", 0, 3000000, BERTH_QUANTITY_DECIMAL_SI},
	{"2P", 2000000000000000, 0, BERTH_QUANTITY_DECIMAL_SI},
};

static void test_values(void)
{
	for (size_t i = 0; i < sizeof(value_table) / sizeof(value_table[0]); i++) {
		berth_quantity q = must(value_table[i].in);
		CHECKF(q.units == value_table[i].units && q.nanos == value_table[i].nanos &&
		       q.format == value_table[i].format,
		       "%s: %lld %d %d, want %lld %d %d", value_table[i].in, (long long)q.units,
		       q.nanos, (int)q.format, (long long)value_table[i].units,
		       value_table[i].nanos, (int)value_table[i].format);
	}
}

/* ---- rejections ---------------------------------------------------------- */

/* A row: the input literal (its length from sizeof, so NUL bytes count). */
#define R(s, ...) {s, sizeof(s) - 1, __VA_ARGS__}

static const struct {
	const char *in;
	size_t len;
	berth_code code;
	const char *msg;  /* the whole message when full, else a substring */
	int full;
} reject_table[] = {
	R("12Gb", BERTH_EQUANTITY,
	 "\"12Gb\" is not a quantity: unknown suffix \"Gb\" (use one of n u m k M G T P E, "
	 "Ki Mi Gi Ti Pi Ei, or an exponent like e3)", 1),
	R(" 1", BERTH_EQUANTITY, "\" 1\" is not a quantity: spaces are not allowed", 1),
	R("1 ", BERTH_EQUANTITY, "\"1 \" is not a quantity: spaces are not allowed", 1),
	R("1 Gi", BERTH_EQUANTITY, "\"1 Gi\" is not a quantity: spaces are not allowed", 1),
	R("1\t", BERTH_EQUANTITY, "\"1\\t\" is not a quantity: spaces are not allowed", 1),
	R("1\n", BERTH_EQUANTITY, "\"1\\n\" is not a quantity", 0),
	R("", BERTH_EQUANTITY, "\"\" is not a quantity: it is empty", 1),
	R("1K", BERTH_EQUANTITY,
	 "\"1K\" is not a quantity: unknown suffix \"K\" (did you mean \"k\" or \"Ki\"?)", 1),
	R("1g", BERTH_EQUANTITY, "did you mean \"G\" or \"Gi\"?", 0),
	R("1ki", BERTH_EQUANTITY, "unknown suffix \"ki\" (did you mean \"Ki\"?)", 0),
	R("0.1mi", BERTH_EQUANTITY, "(did you mean \"Mi\"?)", 0),
	R("1GI", BERTH_EQUANTITY, "(did you mean \"Gi\"?)", 0),
	R("1N", BERTH_EQUANTITY, "(did you mean \"n\"?)", 0),
	R("1KB", BERTH_EQUANTITY, "unknown suffix \"KB\" (use one of", 0),
	R("1.5.5", BERTH_EQUANTITY, "\"1.5.5\" is not a quantity: more than one decimal point", 1),
	R("1..5", BERTH_EQUANTITY, "more than one decimal point", 0),
	R("1.1.M", BERTH_EQUANTITY, "more than one decimal point", 0),
	R("1e", BERTH_EQUANTITY, "\"1e\" is not a quantity: exponent has no digits", 1),
	R("1e+", BERTH_EQUANTITY, "exponent has no digits", 0),
	R("1E-", BERTH_EQUANTITY, "exponent has no digits", 0),
	R("-3.01e-", BERTH_EQUANTITY, "exponent has no digits", 0),
	R("1e-x", BERTH_EQUANTITY, "exponent has no digits", 0),
	R("--1", BERTH_EQUANTITY, "\"--1\" is not a quantity: more than one sign", 1),
	R("+-1", BERTH_EQUANTITY, "more than one sign", 0),
	R("-+1", BERTH_EQUANTITY, "more than one sign", 0),
	R(".", BERTH_EQUANTITY, "\".\" is not a quantity: it has no digits", 1),
	R("+", BERTH_EQUANTITY, "it has no digits", 0),
	R("-", BERTH_EQUANTITY, "it has no digits", 0),
	R("-.", BERTH_EQUANTITY, "it has no digits", 0),
	R("Gi", BERTH_EQUANTITY, "\"Gi\" is not a quantity: it has no digits", 1),
	R("m", BERTH_EQUANTITY, "it has no digits", 0),
	R("E", BERTH_EQUANTITY, "it has no digits", 0),
	R("e3", BERTH_EQUANTITY, "it has no digits", 0),
	R(".Gi", BERTH_EQUANTITY, "it has no digits", 0),
	R("aoeu", BERTH_EQUANTITY, "it has no digits", 0),
	R("\xe2\x88\x9e", BERTH_EQUANTITY,
	 "\"\\xe2\\x88\\x9e\" is not a quantity: it has no digits", 1),
	R("1e3Gi", BERTH_EQUANTITY, "\"1e3Gi\" is not a quantity: bad exponent \"e3Gi\"", 0),
	R("1e3.5", BERTH_EQUANTITY, "bad exponent \"e3.5\"", 0),
	R("1e1e1", BERTH_EQUANTITY, "bad exponent \"e1e1\"", 0),
	R("1eGi", BERTH_EQUANTITY, "unknown suffix \"eGi\"", 0),
	R("1ee3", BERTH_EQUANTITY, "unknown suffix \"ee3\"", 0),
	R("0x10", BERTH_EQUANTITY, "\"0x10\" is not a quantity: only decimal numbers", 0),
	R("1x10", BERTH_EQUANTITY, "unknown suffix \"x10\"", 0),
	R("1_000", BERTH_EQUANTITY, "digit separators are not allowed", 0),
	R("1,5", BERTH_EQUANTITY, "digit separators are not allowed", 0),
	R("1i", BERTH_EQUANTITY, "unknown suffix \"i\"", 0),
	R(".5i", BERTH_EQUANTITY, "unknown suffix \"i\"", 0),
	R("-3.01i", BERTH_EQUANTITY, "unknown suffix \"i\"", 0),
	R("0.1am", BERTH_EQUANTITY, "unknown suffix \"am\"", 0),
	R("1+1.0M", BERTH_EQUANTITY, "a sign may only come first", 0),
	R("1-3", BERTH_EQUANTITY, "a sign may only come first", 0),
	R("1m3", BERTH_EQUANTITY, "unknown suffix \"m3\"", 0),
	R("1Gi5", BERTH_EQUANTITY, "unknown suffix \"Gi5\"", 0),
	R("1Mib", BERTH_EQUANTITY, "unknown suffix \"Mib\"", 0),
	R("1\0", BERTH_EQUANTITY, "\"1\\x00\" is not a quantity: it contains a NUL byte", 1),
	R("\0" "1", BERTH_EQUANTITY, "it contains a NUL byte", 0),
	R("\x01", BERTH_EQUANTITY, "\"\\x01\" is not a quantity: it has no digits", 1),
	R("1\x7f", BERTH_EQUANTITY, "unknown suffix \"\\x7f\"", 0),
	R("1\"", BERTH_EQUANTITY, "\"1\\\"\" is not a quantity: unknown suffix \"\\\"\"", 0),
	R("1\\", BERTH_EQUANTITY, "\"1\\\\\" is not a quantity", 0),
	R("1Gi\xff", BERTH_EQUANTITY, "unknown suffix \"Gi\\xff\"", 0),
	R("1abcdefghijklmnopqrstuvwxyz", BERTH_EQUANTITY,
	 "unknown suffix \"abcdefghijklmnop...\"", 0),
	/* out of range: rejected, never capped or wrapped */
	R("8Ei", BERTH_ERANGE,
	 "\"8Ei\" is out of range (the largest quantity is 9223372036854775807)", 1),
	R("10E", BERTH_ERANGE,
	 "\"10E\" is out of range (the largest quantity is 9223372036854775807)", 1),
	R("-10E", BERTH_ERANGE,
	 "\"-10E\" is out of range (the smallest quantity is -9223372036854775807)", 1),
	R("12E", BERTH_ERANGE, "is out of range", 0),
	R("9Ei", BERTH_ERANGE, "is out of range", 0),
	R("-8Ei", BERTH_ERANGE, "is out of range", 0),
	R("9223372036854775808", BERTH_ERANGE, "is out of range", 0),
	R("-9223372036854775808", BERTH_ERANGE, "is out of range", 0),
	R("9223372036854775807Ki", BERTH_ERANGE, "is out of range", 0),
	R("9223372036854775807.000000001", BERTH_ERANGE, "is out of range", 0),
	R("9223372036854775807.0000000000000000000001", BERTH_ERANGE, "is out of range", 0),
	R("9223372036854775807999999999n", BERTH_ERANGE, "is out of range", 0),
	R("9.2233720368547758071E", BERTH_ERANGE, "is out of range", 0),
	R("1e19", BERTH_ERANGE, "is out of range", 0),
	R("1e999999999", BERTH_ERANGE, "is out of range", 0),
	R("1e4294967296", BERTH_ERANGE, "is out of range", 0),  /* upstream wraps to 1 */
	R("1e4294967315", BERTH_ERANGE, "is out of range", 0),  /* upstream wraps to 1e19 */
	R("1e99999999999999999999999999", BERTH_ERANGE, "is out of range", 0),
	R("-0.001e99999999999999999999999999", BERTH_ERANGE, "smallest quantity", 0),
	R("0.00000000000000000001e48", BERTH_ERANGE, "is out of range", 0),
};

static void test_reject(void)
{
	for (size_t i = 0; i < sizeof(reject_table) / sizeof(reject_table[0]); i++) {
		const char *in = reject_table[i].in, *want = reject_table[i].msg;
		berth_quantity q = {42, 7, BERTH_QUANTITY_BINARY_SI};
		char msg[512] = "";
		int ret = parse_n(&q, in, reject_table[i].len, msg, sizeof(msg));

		CHECKF(ret == -(int)reject_table[i].code, "row %zu (%s): %d, want %d", i, msg, ret,
		       -(int)reject_table[i].code);
		if (reject_table[i].full)
			CHECKF(strcmp(msg, want) == 0, "row %zu: got\n    %s\n  want\n    %s", i, msg,
			       want);
		else
			CHECKF(strstr(msg, want) != NULL, "row %zu: got\n    %s\n  want substring\n    %s",
			       i, msg, want);
		/* out is untouched on failure */
		CHECKF(q.units == 42 && q.nanos == 7 && q.format == BERTH_QUANTITY_BINARY_SI,
		       "row %zu: out modified", i);
		/* messages are printable ASCII */
		for (const char *p = msg; *p; p++)
			CHECKF(*p >= 0x20 && *p < 0x7f, "row %zu: unprintable byte in message", i);
	}
}

/* A long input is shown by its first 40 bytes, then "...". */
static void test_message_truncation(void)
{
	char in[100], want[200], msg[512];
	berth_quantity q;
	size_t n;

	/* 41 bytes: shown up to the 40th */
	memset(in, 'x', sizeof(in));
	in[0] = '1';
	CHECK_INT(parse_n(&q, in, 41, msg, sizeof(msg)), -BERTH_EQUANTITY);
	n = (size_t)snprintf(want, sizeof(want), "\"%.40s...\" is not a quantity: unknown suffix ", in);
	CHECKF(strncmp(msg, want, n) == 0, "got %s", msg);
	/* exactly 40 bytes: shown whole */
	CHECK_INT(parse_n(&q, in, 40, msg, sizeof(msg)), -BERTH_EQUANTITY);
	snprintf(want, sizeof(want),
		 "\"%.40s\" is not a quantity: unknown suffix \"%.16s...\" (use one of "
		 "n u m k M G T P E, Ki Mi Gi Ti Pi Ei, or an exponent like e3)", in, in + 1);
	CHECK_STR(msg, want);
	/* 100 nines: out of range, shown truncated */
	memset(in, '9', sizeof(in));
	CHECK_INT(parse_n(&q, in, sizeof(in), msg, sizeof(msg)), -BERTH_ERANGE);
	snprintf(want, sizeof(want),
		 "\"%.40s...\" is out of range (the largest quantity is 9223372036854775807)", in);
	CHECK_STR(msg, want);
	/* escapes count the input bytes, not the escaped text */
	memset(in, 1, sizeof(in));
	in[0] = '1';
	CHECK_INT(parse_n(&q, in, sizeof(in), msg, sizeof(msg)), -BERTH_EQUANTITY);
	CHECK(strncmp(msg, "\"1\\x01\\x01", 10) == 0);
	CHECK(strstr(msg, "\\x01...\" is not a quantity: unknown suffix \"\\x01") != NULL);
	CHECK_INT(strlen(msg), 1 + 1 + 39 * 4 + 3 + 1 + strlen(" is not a quantity: unknown suffix ") +
			       1 + 16 * 4 + 3 + 1 + strlen(" (use one of n u m k M G T P E, Ki Mi Gi Ti "
							   "Pi Ei, or an exponent like e3)"));
}

/* Long inputs: thousands of digits, exactly, without allocating per digit. */
static void test_long_inputs(void)
{
	size_t n = 20000;
	char *s = malloc(n + 64);
	berth_quantity q;
	char msg[256];
	size_t len;

	if (!s)
		abort();
	/* 1 then 20000 zeros, then e-20000 */
	s[0] = '1';
	memset(s + 1, '0', n);
	len = 1 + n + (size_t)snprintf(s + 1 + n, 32, "e-%zu", n);
	CHECK_INT(parse_n(&q, s, len, msg, sizeof(msg)), 0);
	CHECK_STR(fmt(&q), "1");
	/* the same with one more zero is ten */
	len = 1 + n + (size_t)snprintf(s + 1 + n, 32, "e-%zu", n - 1);
	CHECK_INT(parse_n(&q, s, len, msg, sizeof(msg)), 0);
	CHECK_INT(q.units, 10);
	/* 20000 leading zeros then 5Gi */
	memset(s, '0', n);
	memcpy(s + n, "5Gi", 3);
	CHECK_INT(parse_n(&q, s, n + 3, msg, sizeof(msg)), 0);
	CHECK_STR(fmt(&q), "5Gi");
	/* 0.000...0001 (20000 zeros) is 1n; negative is -1n */
	memcpy(s, "-0.", 3);
	memset(s + 3, '0', n);
	s[3 + n] = '1';
	CHECK_INT(parse_n(&q, s + 1, n + 3, msg, sizeof(msg)), 0);
	CHECK_STR(fmt(&q), "1n");
	CHECK_INT(parse_n(&q, s, n + 4, msg, sizeof(msg)), 0);
	CHECK_STR(fmt(&q), "-1n");
	/* 1.000...0001Ki: just above 1024, rounded up to the next nano */
	memcpy(s, "1.", 2);
	memset(s + 2, '0', n);
	memcpy(s + 2 + n, "1Ki", 3);
	CHECK_INT(parse_n(&q, s, n + 5, msg, sizeof(msg)), 0);
	CHECK_INT(q.units, 1024);
	CHECK_INT(q.nanos, 1);
	CHECK_STR(fmt(&q), "1024000000001n");
	/* 20000 nines: out of range, and the message is short */
	memset(s, '9', n);
	CHECK_INT(parse_n(&q, s, n, msg, sizeof(msg)), -BERTH_ERANGE);
	CHECK(strlen(msg) < 120);
	/* 20000 nines after the point, Ei: rounds up exactly */
	memcpy(s, "0.", 2);
	memset(s + 2, '9', n);
	memcpy(s + 2 + n, "Ei", 2);
	CHECK_INT(parse_n(&q, s, n + 4, msg, sizeof(msg)), 0);
	CHECK_STR(fmt(&q), "1Ei");
	/* an exponent of 20000 digits */
	s[0] = '7';
	s[1] = 'e';
	s[2] = '-';
	memset(s + 3, '9', n);
	CHECK_INT(parse_n(&q, s, n + 3, msg, sizeof(msg)), 0);
	CHECK_STR(fmt(&q), "1e-9");
	s[2] = '+';
	CHECK_INT(parse_n(&q, s, n + 3, msg, sizeof(msg)), -BERTH_ERANGE);
	s[0] = '0';
	CHECK_INT(parse_n(&q, s, n + 3, msg, sizeof(msg)), 0);
	CHECK_STR(fmt(&q), "0");
	free(s);
}

/* The input need not be NUL-terminated; only len bytes are read. */
static void test_not_terminated(void)
{
	static const char text[5] = {'1', '.', '5', 'G', 'i'};
	berth_quantity q;

	CHECK_INT(parse_n(&q, text, 3, NULL, 0), 0);
	CHECK_STR(fmt(&q), "1500m");
	CHECK_INT(parse_n(&q, text, 5, NULL, 0), 0);
	CHECK_STR(fmt(&q), "1536Mi");
	CHECK_INT(parse_n(&q, text, 4, NULL, 0), 0);
	CHECK_STR(fmt(&q), "1500M");
	CHECK_INT(parse_n(&q, text, 1, NULL, 0), 0);
	CHECK_STR(fmt(&q), "1");
	CHECK_INT(parse_n(&q, text, 0, NULL, 0), -BERTH_EQUANTITY);
	/* a NULL string of length 0 is the empty string */
	CHECK_INT(berth_quantity_parse_message(&q, NULL, 0, NULL, 0), -BERTH_EQUANTITY);
}

static void test_message_buffer(void)
{
	berth_quantity q;
	char msg[12];

	memset(msg, 'z', sizeof(msg));
	CHECK_INT(parse_s(&q, "12Gb", msg, sizeof(msg)), -BERTH_EQUANTITY);
	CHECK_STR(msg, "\"12Gb\" is n");
	memset(msg, 'z', sizeof(msg));
	CHECK_INT(parse_s(&q, "12Gb", msg, 1), -BERTH_EQUANTITY);
	CHECK_INT(msg[0], '\0');
	CHECK_INT(msg[1], 'z');
	CHECK_INT(parse_s(&q, "12Gb", NULL, 0), -BERTH_EQUANTITY);
	/* success clears the message */
	CHECK_INT(parse_s(&q, "12Gi", msg, sizeof(msg)), 0);
	CHECK_STR(msg, "");
}

static void test_error_object(void)
{
	berth_error *err = NULL;
	berth_quantity q;
	const berth_problem *p;

	CHECK_INT(berth_quantity_parse(&q, "12Gi", 4, &err), 0);
	CHECK(err == NULL);
	CHECK_INT(berth_quantity_parse(&q, "12Gb", 4, &err), -BERTH_EQUANTITY);
	CHECK_INT(berth_quantity_parse(&q, "10E", 3, &err), -BERTH_ERANGE);
	CHECK_INT(berth_quantity_parse(&q, "1K", 2, NULL), -BERTH_EQUANTITY);
	CHECK_INT(berth_error_count(err), 2);
	CHECK_INT(berth_error_code(err), BERTH_EQUANTITY);
	p = berth_error_get(err, 0);
	if (CHECK(p)) {
		CHECK_INT(p->code, BERTH_EQUANTITY);
		CHECK_INT(p->severity, BERTH_ERROR);
		CHECK(p->file == NULL && p->path == NULL && p->line == 0 && p->column == 0);
		CHECK_STR(p->message, "\"12Gb\" is not a quantity: unknown suffix \"Gb\" (use one of "
				      "n u m k M G T P E, Ki Mi Gi Ti Pi Ei, or an exponent like e3)");
	}
	p = berth_error_get(err, 1);
	if (CHECK(p)) {
		CHECK_INT(p->code, BERTH_ERANGE);
		CHECK_STR(p->message,
			  "\"10E\" is out of range (the largest quantity is 9223372036854775807)");
	}
	berth_error_free(err);

#ifdef BERTH_FAULT_INJECTION
	/* the problem itself cannot be allocated: out of memory, nothing leaks */
	err = NULL;
	berth_fail_alloc_after = 1;
	CHECK_INT(berth_quantity_parse(&q, "12Gb", 4, &err), -BERTH_ENOMEM);
	CHECK_INT(berth_error_code(err), BERTH_ENOMEM);
	berth_error_free(err);
	err = NULL;
	berth_fail_alloc_after = 2;
	CHECK(berth_quantity_parse(&q, "12Gb", 4, &err) < 0);
	CHECK(berth_error_code(err) == BERTH_ENOMEM || berth_error_code(err) == BERTH_EQUANTITY);
	berth_error_free(err);
	berth_fail_alloc_after = 0;
	/* parsing a valid quantity allocates nothing */
	berth_fail_alloc_after = 1;
	err = NULL;
	CHECK_INT(berth_quantity_parse(&q, "1.5Gi", 5, &err), 0);
	CHECK(err == NULL);
	CHECK_INT(berth_fail_alloc_after, 1);
	berth_fail_alloc_after = 0;
#endif
}

/* ---- comparison ---------------------------------------------------------- */

static void test_cmp(void)
{
	static const struct {
		const char *a, *b;
		int want;
	} table[] = {
		{"1Gi", "1024Mi", 0},
		{"1000m", "1", 0},
		{"1k", "1000", 0},
		{"0.5", "500m", 0},
		{"1e3", "1k", 0},
		{"1e-10", "1n", 0},
		{"0Gi", "0", 0},
		{"0", "-0", 0},
		{"1Ki", "1k", 1},
		{"1k", "1Ki", -1},
		{"100m", "50m", 1},
		{"50m", "100m", -1},
		{"10000T", "100Gi", 1},
		{"-1", "-2", 1},
		{"-2", "-1", -1},
		{"-2Gi", "-1Gi", -1},
		{"-1Gi", "-1G", -1},
		{"-1n", "0", -1},
		{"1n", "0", 1},
		{"1n", "2n", -1},
		{"-1n", "-2n", 1},
		{"9223372036854775807", "-9223372036854775807", 1},
		{"9223372036854775807", "9223372036854775806.999999999", 1},
		{"7Ei", "8070450532247928832", 0},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		berth_quantity a = must(table[i].a), b = must(table[i].b);
		CHECKF(berth_quantity_cmp(&a, &b) == table[i].want, "cmp(%s, %s) = %d, want %d",
		       table[i].a, table[i].b, berth_quantity_cmp(&a, &b), table[i].want);
		CHECKF(berth_quantity_cmp(&b, &a) == -table[i].want, "cmp(%s, %s) not antisymmetric",
		       table[i].b, table[i].a);
	}
}

static void test_sign_integer(void)
{
	static const struct {
		const char *in;
		int sign, integer;
	} table[] = {
		{"0", 0, 1}, {"-0", 0, 1}, {"1", 1, 1}, {"-1", -1, 1}, {"1n", 1, 0},
		{"-1n", -1, 0}, {"1.5", 1, 0}, {"1Gi", 1, 1}, {"0.5Ki", 1, 1},
		{"1000m", 1, 1}, {"1001m", 1, 0}, {"-1e-99", -1, 0}, {"2e0", 1, 1},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		berth_quantity q = must(table[i].in);
		CHECKF(berth_quantity_sign(&q) == table[i].sign, "sign(%s) = %d", table[i].in,
		       berth_quantity_sign(&q));
		CHECKF(berth_quantity_is_integer(&q) == table[i].integer, "is_integer(%s) = %d",
		       table[i].in, berth_quantity_is_integer(&q));
	}
}

/* ---- arithmetic ----------------------------------------------------------- */

static void test_add(void)
{
	static const struct {
		const char *a, *b, *want;  /* want NULL: out of range */
		enum berth_quantity_format format;
	} table[] = {
		{"1Gi", "512Mi", "1536Mi", BERTH_QUANTITY_BINARY_SI},
		{"1", "500m", "1500m", BERTH_QUANTITY_DECIMAL_SI},
		{"1Ki", "1", "1025", BERTH_QUANTITY_BINARY_SI},
		{"10", "1Ki", "1034", BERTH_QUANTITY_DECIMAL_SI},
		{"1Ki", "1k", "2024", BERTH_QUANTITY_BINARY_SI},
		{"1Ki", "1Ki", "2Ki", BERTH_QUANTITY_BINARY_SI},
		{"100m", "0", "100m", BERTH_QUANTITY_DECIMAL_SI},
		/* upstream Add: a zero receiver takes the other's format */
		{"0", "1Gi", "1Gi", BERTH_QUANTITY_BINARY_SI},
		{"0", "1e3", "1e3", BERTH_QUANTITY_DECIMAL_EXP},
		{"1e3", "1e3", "2e3", BERTH_QUANTITY_DECIMAL_EXP},
		{"-1.5", "0.5", "-1", BERTH_QUANTITY_DECIMAL_SI},
		{"1n", "-2n", "-1n", BERTH_QUANTITY_DECIMAL_SI},
		{"-1n", "1n", "0", BERTH_QUANTITY_DECIMAL_SI},
		{"1Gi", "-1Gi", "0", BERTH_QUANTITY_BINARY_SI},
		{"0.999999999", "1n", "1", BERTH_QUANTITY_DECIMAL_SI},
		{"-0.999999999", "-1n", "-1", BERTH_QUANTITY_DECIMAL_SI},
		{"9223372036854775807", "-1", "9223372036854775806", BERTH_QUANTITY_DECIMAL_SI},
		{"9223372036854775807", "-9223372036854775807", "0", BERTH_QUANTITY_DECIMAL_SI},
		{"4611686018427387904", "4611686018427387903", "9223372036854775807",
		 BERTH_QUANTITY_DECIMAL_SI},
		{"4Ei", "3Ei", "7Ei", BERTH_QUANTITY_BINARY_SI},
		{"4Ei", "4Ei", NULL, 0},
		{"9223372036854775807", "1n", NULL, 0},
		{"-9223372036854775807", "-1n", NULL, 0},
		{"4611686018427387904", "4611686018427387904", NULL, 0},
		{"9223372036854775806.999999999", "1n", "9223372036854775807",
		 BERTH_QUANTITY_DECIMAL_SI},
		{"9223372036854775806.999999999", "2n", NULL, 0},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		berth_quantity a = must(table[i].a), b = must(table[i].b);
		berth_quantity out = {42, 7, BERTH_QUANTITY_DECIMAL_EXP};
		int ret = berth_quantity_add(&out, &a, &b);

		if (!table[i].want) {
			CHECKF(ret == -BERTH_ERANGE, "%s + %s: %d", table[i].a, table[i].b, ret);
			CHECKF(out.units == 42 && out.nanos == 7, "%s + %s: out modified", table[i].a,
			       table[i].b);
			continue;
		}
		CHECKF(ret == 0 && strcmp(fmt(&out), table[i].want) == 0 &&
		       out.format == table[i].format,
		       "%s + %s = %s (%d, format %d), want %s", table[i].a, table[i].b, fmt(&out), ret,
		       (int)out.format, table[i].want);
	}
	/* in place */
	{
		berth_quantity a = must("1Gi"), b = must("1Gi");
		CHECK_INT(berth_quantity_add(&a, &a, &b), 0);
		CHECK_STR(fmt(&a), "2Gi");
		CHECK_INT(berth_quantity_add(&a, &a, &a), 0);
		CHECK_STR(fmt(&a), "4Gi");
	}
}

static void test_mul(void)
{
	static const struct {
		const char *q, *ratio, *want;  /* want NULL: out of range */
	} table[] = {
		{"32Gi", "1.1", "37795712204800m"},
		{"1", "1", "1"},
		{"1Gi", "2", "2Gi"},
		{"1Gi", "0.5", "512Mi"},
		{"3", "-1.5", "-4500m"},
		{"-3", "-1.5", "4500m"},
		{"1n", "0.5", "1n"},
		{"-1n", "0.5", "-1n"},
		{"1n", "1n", "1n"},
		{"-1n", "1n", "-1n"},
		{"1n", "0.000001", "1n"},
		{"3n", "0.5", "2n"},
		{"-3n", "0.5", "-2n"},
		{"0", "9223372036854775807", "0"},
		{"100m", "0", "0"},
		{"1e3", "3", "3e3"},
		{"9223372036854775807", "1", "9223372036854775807"},
		{"-9223372036854775807", "1", "-9223372036854775807"},
		{"9223372036854775807", "-1", "-9223372036854775807"},
		{"4611686018427387903.5", "2", "9223372036854775807"},
		{"4Ei", "2", NULL},
		{"9223372036854775807", "1.000000001", NULL},
		{"9223372036854775807", "1.0000000001", NULL},
		{"9223372036854775807", "9223372036854775807", NULL},
		{"-9223372036854775807", "9223372036854775807", NULL},
		{"9223372036854775807", "0.5", "4611686018427387903500m"},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		berth_quantity q = must(table[i].q), r = must(table[i].ratio);
		berth_quantity out = {42, 7, BERTH_QUANTITY_DECIMAL_EXP};
		int ret = berth_quantity_mul(&out, &q, &r);

		if (!table[i].want) {
			CHECKF(ret == -BERTH_ERANGE, "%s * %s: %d", table[i].q, table[i].ratio, ret);
			CHECKF(out.units == 42 && out.nanos == 7, "%s * %s: out modified", table[i].q,
			       table[i].ratio);
			continue;
		}
		CHECKF(ret == 0 && strcmp(fmt(&out), table[i].want) == 0 && out.format == q.format,
		       "%s * %s = %s (%d), want %s", table[i].q, table[i].ratio, fmt(&out), ret,
		       table[i].want);
	}
}

static void test_ceil(void)
{
	static const struct {
		const char *in;
		int64_t want;
	} table[] = {
		{"37795712204.8", 37795712205},
		{"1.000000001", 2},
		{"1n", 1},
		{"5", 5},
		{"0", 0},
		{"-1.5", -1},
		{"-0.5", 0},
		{"-1n", 0},
		{"-2", -2},
		{"0.5Ki", 512},
		{"9223372036854775806.000000001", INT64_MAX},
		{"-9223372036854775806.999999999", -INT64_MAX + 1},
	};
	berth_quantity q, r, out;

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		q = must(table[i].in);
		CHECKF(berth_quantity_ceil(&out, &q) == 0 && out.units == table[i].want &&
		       out.nanos == 0 && out.format == q.format,
		       "ceil(%s) = %lld.%09d", table[i].in, (long long)out.units, out.nanos);
	}
	/* the brief's 32Gi * 1.1, rounded up to whole bytes */
	q = must("32Gi");
	r = must("1.1");
	CHECK_INT(berth_quantity_mul(&out, &q, &r), 0);
	CHECK_INT(berth_quantity_ceil(&out, &out), 0);
	CHECK_INT(out.units, 37795712205);
	CHECK_INT(out.nanos, 0);
	CHECK_STR(fmt(&out), "37795712205");
	/* not a valid quantity: the ceiling does not fit */
	q.units = INT64_MAX;
	q.nanos = 1;
	out = must("3");
	CHECK_INT(berth_quantity_ceil(&out, &q), -BERTH_ERANGE);
	CHECK_INT(out.units, 3);
}

static void test_milli_value(void)
{
	static const struct {
		const char *in;
		int64_t milli, value;
	} table[] = {
		{"1.5", 1500, 2},
		{"100m", 100, 1},
		{"1n", 1, 1},
		{"-1n", 0, 0},
		{"-1.5", -1500, -1},
		{"1.0001m", 2, 1},
		{"-1.0001m", -1, 0},
		{"0", 0, 0},
		{"1Gi", 1073741824000, 1073741824},
		{"32Gi", 34359738368000, 34359738368},
		{"250m", 250, 1},
		{"2", 2000, 2},
		{"9223372036854775.807", INT64_MAX, 9223372036854776},
		{"9223372036854775.8071", INT64_MAX, 9223372036854776},
		{"9223372036854775.808", INT64_MAX, 9223372036854776},
		{"-9223372036854775.808", INT64_MIN, -9223372036854775},
		{"-9223372036854775.809", INT64_MIN, -9223372036854775},
		{"9223372036854775807", INT64_MAX, INT64_MAX},
		{"-9223372036854775807", INT64_MIN, -INT64_MAX},
		{"9223372036854775806.1", INT64_MAX, INT64_MAX},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		berth_quantity q = must(table[i].in);
		CHECKF(berth_quantity_milli(&q) == table[i].milli, "milli(%s) = %lld, want %lld",
		       table[i].in, (long long)berth_quantity_milli(&q), (long long)table[i].milli);
		CHECKF(berth_quantity_value(&q) == table[i].value, "value(%s) = %lld, want %lld",
		       table[i].in, (long long)berth_quantity_value(&q), (long long)table[i].value);
	}
}

/* ---- construction and formatting ----------------------------------------- */

static void test_from_int(void)
{
	berth_quantity q;

	q = berth_quantity_from_int(5, BERTH_QUANTITY_BINARY_SI);
	CHECK_STR(fmt(&q), "5");
	CHECK_INT(q.units, 5);
	CHECK_INT(q.nanos, 0);
	CHECK_INT(q.format, BERTH_QUANTITY_BINARY_SI);
	q = berth_quantity_from_int(1024, BERTH_QUANTITY_BINARY_SI);
	CHECK_STR(fmt(&q), "1Ki");
	q = berth_quantity_from_int(1024 * 1024, BERTH_QUANTITY_BINARY_SI);
	CHECK_STR(fmt(&q), "1Mi");
	q = berth_quantity_from_int(1000, BERTH_QUANTITY_DECIMAL_SI);
	CHECK_STR(fmt(&q), "1k");
	q = berth_quantity_from_int(1234000, BERTH_QUANTITY_DECIMAL_SI);
	CHECK_STR(fmt(&q), "1234k");
	q = berth_quantity_from_int(1000000, BERTH_QUANTITY_DECIMAL_EXP);
	CHECK_STR(fmt(&q), "1e6");
	q = berth_quantity_from_int(-1, BERTH_QUANTITY_DECIMAL_SI);
	CHECK_STR(fmt(&q), "-1");
	q = berth_quantity_from_int(INT64_MAX, BERTH_QUANTITY_BINARY_SI);
	CHECK_STR(fmt(&q), "9223372036854775807");
	/* upstream: an unknown format prints as a decimal exponent */
	q = berth_quantity_from_int(1000000, (enum berth_quantity_format)7);
	CHECK_STR(fmt(&q), "1e6");
}

static void test_format_buffer(void)
{
	berth_quantity q = must("1.5Gi");
	char buf[8];

	CHECK_INT(berth_quantity_format(&q, NULL, 0), 6);
	memset(buf, 'z', sizeof(buf));
	CHECK_INT(berth_quantity_format(&q, buf, 3), 6);
	CHECK_STR(buf, "15");
	CHECK_INT(buf[3], 'z');
	CHECK_INT(berth_quantity_format(&q, buf, 6), 6);
	CHECK_STR(buf, "1536M");
	CHECK_INT(berth_quantity_format(&q, buf, 7), 6);
	CHECK_STR(buf, "1536Mi");
	memset(buf, 'z', sizeof(buf));
	CHECK_INT(berth_quantity_format(&q, buf, 1), 6);
	CHECK_INT(buf[0], '\0');
	CHECK_INT(buf[1], 'z');
	/* the longest canonical forms fit BERTH_QUANTITY_STR_MAX */
	q = must("-9223372036854775806999999999n");
	CHECK_INT(berth_quantity_format(&q, NULL, 0), 30);
	q.units = INT64_MIN;
	q.nanos = -999999999;
	q.format = BERTH_QUANTITY_DECIMAL_EXP;
	CHECK(berth_quantity_format(&q, NULL, 0) < BERTH_QUANTITY_STR_MAX);
	q.format = BERTH_QUANTITY_BINARY_SI;
	q.nanos = 0;
	CHECK_STR(fmt(&q), "-8Ei");
}

/* sizes, exactly (issue 23: "1.1Gi" was 1127Mi cut to a tenth): the largest
 * suffix that divides the count, else plain bytes; 0 for a negative count */
static void test_format_size(void)
{
	static const struct {
		int64_t bytes;
		int binary;
		const char *want;
	} rows[] = {
		{0, 1, "0"}, {512, 1, "512"}, {1023, 1, "1023"}, {1024, 1, "1Ki"},
		{3355443, 1, "3355443"}, {(int64_t)1024 * 1024 * 1024 - 1, 1, "1073741823"},
		{10485760, 1, "10Mi"}, {1181745152, 1, "1127Mi"}, {1610612736, 1, "1536Mi"},
		{2147483648, 1, "2Gi"}, {1500, 0, "1500"}, {1500000, 0, "1500k"},
		{2000000000, 0, "2G"}, {-5, 1, "0"}, {INT64_MAX, 1, "9223372036854775807"},
		{(int64_t)1 << 62, 1, "4Ei"},
	};
	char buf[32];
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(rows); i++) {
		berth_format_size(buf, sizeof(buf), rows[i].bytes, rows[i].binary);
		CHECK_STR(buf, rows[i].want);
		if (rows[i].binary) {
			CHECK_INT(berth_format_bytes(buf, sizeof(buf), rows[i].bytes), strlen(rows[i].want));
			CHECK_STR(buf, rows[i].want);
		}
	}
	berth_format_size(buf, 4, 10485760, 1); /* cut to the buffer, still a string */
	CHECK_STR(buf, "10M");
	/* a byte count reads back as the same quantity */
	berth_quantity q;
	CHECK_INT(berth_quantity_parse(&q, "1127Mi", 6, NULL), 0);
	berth_format_bytes(buf, sizeof(buf), berth_quantity_value(&q));
	CHECK_STR(buf, "1127Mi");
}

/* CPUs: whole cores when whole, else millicores, as Kubernetes writes them */
static void test_format_cpu(void)
{
	static const struct {
		int64_t milli;
		const char *want;
	} rows[] = {{0, "0"}, {100, "100m"}, {150, "150m"}, {1000, "1"}, {1500, "1500m"},
		    {32000, "32"}, {1, "1m"}};
	char buf[32];
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(rows); i++) {
		CHECK_INT(berth_format_cpu(buf, sizeof(buf), rows[i].milli), strlen(rows[i].want));
		CHECK_STR(buf, rows[i].want);
	}
}

/* a ratio (mem_limit_ratio) or a user's number: a plain decimal, never "1100m" */
static void test_decimal(void)
{
	static const char *const rows[][2] = {{"1.1", "1.1"}, {"1.10", "1.1"}, {"0.5", "0.5"},
					      {"500m", "0.5"}, {"2", "2"}, {"1e3", "1000"},
					      {"-1.25", "-1.25"}, {"1n", "0.000000001"}};
	char buf[48];
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(rows); i++) {
		berth_quantity q;
		CHECK_INT(berth_quantity_parse(&q, rows[i][0], strlen(rows[i][0]), NULL), 0);
		berth_quantity_decimal(&q, buf, sizeof(buf));
		CHECK_STR(buf, rows[i][1]);
	}
}

/* A quantity read again is read the same, whatever came between: the texts
 * a thread read last are kept whole, so texts of one length and the same
 * ends are not mixed, and a text with a problem is read (and refused) each
 * time. */
static void test_parse_again(void)
{
	static const struct {
		const char *text, *want; /* want NULL: refused */
	} v[] = {
		{"1.5Gi", "1536Mi"}, {"1.6Gi", "1717986918400m"}, {"1.5Ki", "1536"},
		{"500m", "500m"}, {"5000m", "5"}, {"1ki", NULL}, {"1Ki", "1Ki"},
		{"4", "4"}, {"4e3", "4e3"}, {"1..5Gi", NULL}, {"12345678901234567890123", NULL},
	};
	for (int round = 0; round < 3; round++) {
		for (size_t k = 0; k < BERTH_ARRAY_SIZE(v); k++) {
			size_t i = round == 1 ? BERTH_ARRAY_SIZE(v) - 1 - k : k;
			berth_quantity q = {7, 7, BERTH_QUANTITY_DECIMAL_SI};
			char msg[256] = "x";
			int ret = berth_quantity_parse_message(&q, v[i].text, strlen(v[i].text), msg, sizeof(msg));
			if (v[i].want) {
				CHECKF(ret == 0, "%s: %d %s", v[i].text, ret, msg);
				CHECK_STR(msg, "");
				CHECK_STR(fmt(&q), v[i].want);
			} else {
				CHECKF(ret < 0, "%s read as %s", v[i].text, fmt(&q));
				CHECK(msg[0] != '\0');
			}
		}
		for (int64_t u = 1; u <= 300; u++) {
			char text[32], want[32];
			berth_quantity q;
			snprintf(text, sizeof(text), "%" PRId64 "Mi", u * 3);
			snprintf(want, sizeof(want), "%" PRId64 "Mi", u * 3);
			if ((u * 3) % 1024 == 0)
				continue;
			CHECK_INT(berth_quantity_parse_message(&q, text, strlen(text), NULL, 0), 0);
			CHECK_STR(fmt(&q), want);
		}
	}
}

/* A quantity printed again is printed the same, whatever came between: the
 * forms a thread printed last are kept by the whole value (units, nanos,
 * format), so values that share units or fall on one place are not mixed. */
static void test_format_again(void)
{
	static const struct {
		berth_quantity q;
		const char *want;
	} v[] = {
		{{1024, 0, BERTH_QUANTITY_BINARY_SI}, "1Ki"},
		{{1024, 0, BERTH_QUANTITY_DECIMAL_SI}, "1024"},
		{{1024, 0, BERTH_QUANTITY_DECIMAL_EXP}, "1024"},
		{{1024, 5, BERTH_QUANTITY_DECIMAL_SI}, "1024000000005n"},
		{{-1024, 0, BERTH_QUANTITY_BINARY_SI}, "-1Ki"},
		{{0, 500000000, BERTH_QUANTITY_DECIMAL_SI}, "500m"},
		{{1000000, 0, BERTH_QUANTITY_DECIMAL_EXP}, "1e6"},
		{{0, 0, BERTH_QUANTITY_BINARY_SI}, "0"},
	};
	for (int round = 0; round < 3; round++) {
		for (size_t i = 0; i < BERTH_ARRAY_SIZE(v); i++)
			CHECK_STR(fmt(&v[round == 1 ? BERTH_ARRAY_SIZE(v) - 1 - i : i].q),
				  v[round == 1 ? BERTH_ARRAY_SIZE(v) - 1 - i : i].want);
		/* many other values between the rounds: each place taken many times */
		for (int64_t u = 1; u <= 600; u++) {
			berth_quantity q = {u * 1024 * 1024, 0, BERTH_QUANTITY_BINARY_SI};
			char want[32];
			snprintf(want, sizeof(want), "%" PRId64 "Mi", u);
			if (u % 1024 != 0)
				CHECK_STR(fmt(&q), want);
		}
	}
}

T_MAIN(T(test_canonical), T(test_binary_readback), T(test_values), T(test_reject), T(test_message_truncation), T(test_long_inputs),
       T(test_not_terminated), T(test_message_buffer), T(test_error_object), T(test_cmp),
       T(test_sign_integer), T(test_add), T(test_mul), T(test_ceil), T(test_milli_value),
       T(test_from_int), T(test_format_buffer), T(test_format_size), T(test_format_cpu), T(test_decimal),
       T(test_format_again), T(test_parse_again))
