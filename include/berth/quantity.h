/*
 * berth/quantity.h - exact Kubernetes resource.Quantity.
 *
 * Grammar (upstream k8s.io/apimachinery/pkg/api/resource):
 *   quantity ::= sign? number suffix
 *   number   ::= digits | digits "." digits? | "." digits
 *   suffix   ::= "" | n u m k M G T P E | Ki Mi Gi Ti Pi Ei | (e|E) sign? digits
 * Unlike upstream, a number without any digit ("." "+" "-" "Gi" "m"), which
 * upstream silently reads as zero, is rejected, and so is any value whose
 * magnitude exceeds 2^63-1 units (upstream caps or wraps it).
 *
 * Values are exact: no floating point anywhere. A value is held as whole
 * units plus nanounits; anything finer than 1n is rounded up, away from
 * zero, to 1n, as upstream does ("if you want some resources, you should get
 * some resources").
 *
 * The format (decimal SI, binary SI, decimal exponent) is that of the
 * suffix the value was written with, and decides the canonical form,
 * exactly as Kubernetes prints it: "0.5" -> "500m", "1.5Gi" -> "1536Mi",
 * "1e13" -> "10e12", "1000M" -> "1G", "1024Mi" -> "1Gi", "1500" -> "1500".
 *
 * All functions are pure and thread-safe.
 */
#ifndef BERTH_QUANTITY_H
#define BERTH_QUANTITY_H

#include <stddef.h>
#include <stdint.h>

#include "berth/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The format of a quantity. There is deliberately no typedef: the name
 * berth_quantity_format belongs to the function that prints a quantity, and
 * C gives typedefs and functions one namespace; write the enum tag.
 */
enum berth_quantity_format {
	BERTH_QUANTITY_DECIMAL_SI = 0,   /* "", n u m k M G T P E */
	BERTH_QUANTITY_BINARY_SI = 1,    /* Ki Mi Gi Ti Pi Ei */
	BERTH_QUANTITY_DECIMAL_EXP = 2,  /* e3, E-6 */
};

typedef struct berth_quantity {
	int64_t units;  /* whole units, truncated toward zero */
	int32_t nanos;  /* billionths, same sign as units, |nanos| < 1e9 */
	enum berth_quantity_format format;
} berth_quantity;

/* The largest magnitude, in whole units: 2^63-1. */
#define BERTH_QUANTITY_MAX_UNITS INT64_MAX

/* Longest canonical form, with its NUL ("-9223372036854775807999999999n"). */
#define BERTH_QUANTITY_STR_MAX 48

/*
 * Parses s (length len; s need not be NUL-terminated). On error returns
 * -BERTH_EQUANTITY (malformed) or -BERTH_ERANGE (overflow) and, when err is
 * not NULL, adds one problem whose message quotes the input, e.g.
 * "\"12Gb\" is not a quantity" (no position: callers that know where the
 * value came from report it themselves with berth_quantity_parse_message).
 */
int berth_quantity_parse(berth_quantity *out, const char *s, size_t len, berth_error **err);

/*
 * Like berth_quantity_parse but without an error object: returns 0 or the
 * negative code, and writes the message ("\"12Gb\" is not a quantity: ...")
 * into msg (size msglen) on failure. For callers that attach positions.
 */
int berth_quantity_parse_message(berth_quantity *out, const char *s, size_t len,
				 char *msg, size_t msglen);

/* Builds a quantity of whole units in the given format. */
berth_quantity berth_quantity_from_int(int64_t units, enum berth_quantity_format format);

/* -1, 0, 1: compares values whatever their formats (1Gi == 1024Mi). */
int berth_quantity_cmp(const berth_quantity *a, const berth_quantity *b);

/* -1, 0 or 1: the sign of the value. */
int berth_quantity_sign(const berth_quantity *q);

/* 1 when the value is a whole number of units (GPUs must be). */
int berth_quantity_is_integer(const berth_quantity *q);

/*
 * out = a + b. The result takes a's format (upstream Add keeps the
 * receiver's format). -BERTH_ERANGE on overflow, out untouched.
 */
int berth_quantity_add(berth_quantity *out, const berth_quantity *a, const berth_quantity *b);

/*
 * out = q * ratio, where ratio is itself an exact decimal quantity (e.g. the
 * 1.1 of mem_limit_ratio). Rounded up, away from zero, to 1n. Keeps q's
 * format. -BERTH_ERANGE on overflow.
 */
int berth_quantity_mul(berth_quantity *out, const berth_quantity *q, const berth_quantity *ratio);

/* Rounds up (toward +infinity) to whole units: 37795712204.8 -> 37795712205. */
int berth_quantity_ceil(berth_quantity *out, const berth_quantity *q);

/*
 * Writes the canonical form Kubernetes prints into buf (size len, at least
 * BERTH_QUANTITY_STR_MAX is always enough). Returns the length written, or
 * the length needed if len is too small (as snprintf).
 */
size_t berth_quantity_format(const berth_quantity *q, char *buf, size_t len);

/* The value as a count of milliunits (CPU millicores), rounded up; saturates. */
int64_t berth_quantity_milli(const berth_quantity *q);

/* The value in whole units, rounded up (memory bytes, GPUs); saturates. */
int64_t berth_quantity_value(const berth_quantity *q);

#ifdef __cplusplus
}
#endif

#endif
