/*
 * berth/quantity.h - exact Kubernetes resource.Quantity.
 *
 * Grammar (upstream k8s.io/apimachinery/pkg/api/resource):
 *   quantity ::= sign? number suffix
 *   number   ::= digits | digits "." digits? | "." digits
 *   suffix   ::= "" | n u m k M G T P E | Ki Mi Gi Ti Pi Ei | (e|E) sign? digits
 * Unlike upstream, a number without any digit ("." "+" "-" "Gi" "m"), which
 * upstream silently reads as zero, is rejected, and so is any value whose
 * magnitude exceeds 2^63-1 units (upstream caps it at 2^63-1, and wraps an
 * exponent beyond 32 bits: "1e4294967296" is 1 there, out of range here).
 * An exponent of any length is read without overflow: huge and positive,
 * it puts a nonzero value out of range; huge and negative, it rounds up to
 * 1n. Whitespace anywhere, a NUL byte, or any other byte outside the grammar
 * is rejected.
 *
 * Values are exact: no floating point anywhere. A value is held as whole
 * units plus nanounits; anything finer than 1n is rounded up, away from
 * zero, to 1n, as upstream does ("if you want some resources, you should get
 * some resources").
 *
 * The format (decimal SI, binary SI, decimal exponent) is that of the
 * suffix the value was written with (as upstream, a binary value of
 * magnitude below one unit becomes decimal SI), and decides the canonical
 * form, exactly as Kubernetes computes it: "0.5" -> "500m", "1.5Gi" ->
 * "1536Mi", "1e13" -> "10e12", "1e-9" -> "1e-9", "1000M" -> "1G", "1024Mi"
 * -> "1Gi", "1500" -> "1500". (Upstream String() returns the input itself
 * when it judges it canonical, so it prints "+1", "1.", "01" or "1E3" back
 * unchanged; berth always prints the computed form: "1", "1", "1", "1e3".)
 * A binary value that is not a multiple of 1024 prints without a suffix
 * and so reads back as decimal: "312.5Ki" -> "320000" -> "320k".
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
 * Parses s (length len; s need not be NUL-terminated, and only len bytes
 * are read). Allocates nothing on success. On error leaves *out untouched,
 * returns -BERTH_EQUANTITY (malformed) or -BERTH_ERANGE (overflow) and,
 * when err is not NULL, adds one problem of that code whose message quotes
 * the input, e.g. "\"12Gb\" is not a quantity: unknown suffix ..." (no
 * position: callers that know where the value came from report it
 * themselves with berth_quantity_parse_message). If that problem cannot be
 * allocated, *err becomes the out-of-memory error and -BERTH_ENOMEM is
 * returned.
 */
int berth_quantity_parse(berth_quantity *out, const char *s, size_t len, berth_error **err);

/*
 * Like berth_quantity_parse but without an error object: returns 0 or the
 * negative code, and writes the message ("\"12Gb\" is not a quantity: ...")
 * into msg (size msglen, truncated and NUL-terminated; msg may be NULL when
 * msglen is 0) on failure, or "" on success. For callers that attach
 * positions. The input is quoted in printable ASCII (other bytes as \xNN,
 * non-ASCII UTF-8 included) and cut to its first 40 bytes, then "...".
 */
int berth_quantity_parse_message(berth_quantity *out, const char *s, size_t len,
				 char *msg, size_t msglen);

/* Builds a quantity of whole units in the given format (units must not be
 * INT64_MIN, whose magnitude is out of range). */
berth_quantity berth_quantity_from_int(int64_t units, enum berth_quantity_format format);

/* -1, 0, 1: compares values whatever their formats (1Gi == 1024Mi). */
int berth_quantity_cmp(const berth_quantity *a, const berth_quantity *b);

/* -1, 0 or 1: the sign of the value. */
int berth_quantity_sign(const berth_quantity *q);

/* 1 when the value is a whole number of units (GPUs must be). */
int berth_quantity_is_integer(const berth_quantity *q);

/*
 * out = a + b, exactly. The result takes a's format, or b's when a is zero
 * (as upstream Add, so that a sum started from "0" keeps the format of what
 * is added). -BERTH_ERANGE on overflow, out untouched. out may alias a or b.
 */
int berth_quantity_add(berth_quantity *out, const berth_quantity *a, const berth_quantity *b);

/*
 * out = q * ratio, where ratio is itself an exact decimal quantity (e.g. the
 * 1.1 of mem_limit_ratio). Rounded up, away from zero, to 1n. Keeps q's
 * format. -BERTH_ERANGE on overflow, out untouched. out may alias q.
 */
int berth_quantity_mul(berth_quantity *out, const berth_quantity *q, const berth_quantity *ratio);

/* Rounds up (toward +infinity) to whole units: 37795712204.8 -> 37795712205,
 * -1.5 -> -1. Keeps q's format. */
int berth_quantity_ceil(berth_quantity *out, const berth_quantity *q);

/*
 * Writes the canonical form Kubernetes prints into buf (size len, at least
 * BERTH_QUANTITY_STR_MAX is always enough). Returns the length written, or
 * the length needed if len is too small (as snprintf).
 */
size_t berth_quantity_format(const berth_quantity *q, char *buf, size_t len);

/*
 * The one spelling of a number every face of berth prints (records, tables,
 * explain, reasons, errors, the API, the UI), exact and as Kubernetes writes it:
 *  - berth_format_bytes: a count of bytes in the largest binary suffix that
 *    divides it exactly ("1127Mi", "2Gi", "1536Mi"), else plain bytes
 *    ("1000", "1181116007"); a negative count is written as 0;
 *  - berth_format_cpu: millicores as whole cores when whole ("2"), else
 *    millicores ("100m", "1500m");
 *  - berth_format_size: bytes exactly, binary as berth_format_bytes, or with
 *    the largest decimal suffix that divides them (binary 0: "1500k", "2G").
 * They return the length written, or needed (as snprintf).
 */
size_t berth_format_bytes(char *buf, size_t len, int64_t bytes);
size_t berth_format_cpu(char *buf, size_t len, int64_t milli);

/*
 * A quantity as a plain decimal number, for what is not a quantity of
 * anything but a number (a ratio: mem_limit_ratio 1.1, not "1100m"), or a
 * value as the user would have written it ("0.5" GPUs): "1.1", "0.5", "2".
 */
size_t berth_quantity_decimal(const berth_quantity *q, char *buf, size_t len);

void berth_format_size(char *buf, size_t len, int64_t bytes, int binary);

/*
 * Times and durations, as every face of berth writes and reads them:
 *  - berth_format_time: a Unix time in ms as RFC 3339 in UTC with
 *    milliseconds, "2026-11-22T13:08:57.039Z" (the API's times, the
 *    timestamps of `berth logs --timestamps`); returns the length, as
 *    snprintf;
 *  - berth_time_parse: RFC 3339 ("...Z" or "+02:00", any digits of a second's
 *    fraction, as Kubernetes writes them) at the start of s, at most n bytes:
 *    0 and the Unix time in *ms (the fraction cut to ms), and in *used (may
 *    be NULL) the bytes it took; -1 when s does not start with one;
 *  - berth_duration_parse: a duration as kubectl's --since takes it, a number
 *    and a unit, one or more ("500ms", "5s", "2m", "1h30m", "2d"), or whole
 *    seconds ("90"); into *ms. 0 up to BERTH_DURATION_MAX_MS; BERTH_EARG with
 *    what is wrong otherwise.
 */
#define BERTH_DURATION_MAX_MS ((int64_t)400 * 86400 * 1000) /* 400 days */
size_t berth_format_time(char *buf, size_t len, int64_t ms);
int berth_time_parse(const char *s, size_t n, int64_t *ms, size_t *used);
int berth_duration_parse(const char *s, int64_t *ms, berth_error **err);

/* The value as a count of milliunits (CPU millicores), rounded up (toward
 * +infinity: -1.0001m -> -1); saturates at INT64_MIN / INT64_MAX. Upstream
 * MilliValue rounds a negative value away from zero instead. */
int64_t berth_quantity_milli(const berth_quantity *q);

/* The value in whole units, rounded up toward +infinity (memory bytes,
 * GPUs); saturates. */
int64_t berth_quantity_value(const berth_quantity *q);

#ifdef __cplusplus
}
#endif

#endif
