/*
 * berth/error.h - errors and problems reported by libberth.
 *
 * Every fallible function of libberth returns 0 on success or a negative
 * berth_code on failure, and takes a `berth_error **err` as its last
 * argument. On failure *err receives an error object the caller owns and
 * frees with berth_error_free(). Input errors (a spec, a policy, a quantity)
 * are collected: one berth_error holds every problem found in one pass, each
 * with its own code, position and key path, so a user sees them all at once.
 *
 * Some functions also report warnings (a problem with severity
 * BERTH_WARNING) while succeeding: they return 0 and set *err to an error
 * object holding only warnings. A caller that passes a non-NULL err must
 * therefore always call berth_error_free(*err), which accepts NULL.
 *
 * The library never prints and never exits; the CLI and the server decide
 * how problems are shown (berth_problem_format) and which exit or HTTP
 * status a code maps to (berth_code_exit_status, berth_code_http_status).
 */
#ifndef BERTH_ERROR_H
#define BERTH_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Stable error codes. Never renumbered; new codes are appended. */
typedef enum berth_code {
	BERTH_OK = 0,
	BERTH_ENOMEM = 1,     /* out of memory */
	BERTH_EIO = 2,        /* a file or stream could not be read */
	BERTH_ESYNTAX = 3,    /* not well-formed YAML or JSON */
	BERTH_EUNKNOWN = 4,   /* unknown key */
	BERTH_ETYPE = 5,      /* wrong type (a list where a map is expected...) */
	BERTH_EQUANTITY = 6,  /* not a Kubernetes quantity */
	BERTH_ERANGE = 7,     /* number out of range, or a quantity overflow */
	BERTH_EINVALID = 8,   /* a value breaks a rule of the run spec */
	BERTH_EMISSING = 9,   /* a required field is missing */
	BERTH_EDUPLICATE = 10, /* a name, key or path given twice */
	BERTH_ETOOBIG = 11,   /* input over a size cap */
	BERTH_EPOLICY = 12,   /* refused by the platform policy */
	BERTH_EARG = 13,      /* wrong use of the API or of a command */
	BERTH_EINTERNAL = 14, /* a bug in berth */
	BERTH_ENOTFOUND = 15, /* no such run, function, secret, project or route */
	BERTH_ECONFLICT = 16, /* the object exists already, or is in a state that forbids it */
	BERTH_EAUTH = 17,     /* no credentials, or unknown ones */
	BERTH_EFORBIDDEN = 18, /* the credentials do not allow it */
	BERTH_ENOSPC = 19,    /* the disk (the data dir's, or the store's) is full */
	BERTH_ETIMEOUT = 20,  /* the time given to wait for something ran out */
	BERTH_EGONE = 21,     /* what was asked for is no longer kept (a watch's old version) */
} berth_code;

typedef enum berth_severity {
	BERTH_ERROR = 0,
	BERTH_WARNING = 1,
} berth_severity;

/* One problem. Strings are owned by the berth_error holding it. */
typedef struct berth_problem {
	berth_code code;
	berth_severity severity;
	const char *file;    /* NULL when not about a file */
	unsigned line;       /* 1-based; 0 when unknown */
	unsigned column;     /* 1-based; 0 when unknown */
	const char *path;    /* key path, e.g. "resources.mem.requests"; may be NULL */
	const char *message; /* lowercase, the offending value quoted */
} berth_problem;

typedef struct berth_error berth_error;

/* Frees err and every problem in it. NULL is a no-op. */
void berth_error_free(berth_error *err);

/* The code of the first problem of severity BERTH_ERROR (BERTH_OK if none). */
berth_code berth_error_code(const berth_error *err);

/* Number of problems (errors and warnings); 0 for NULL. */
size_t berth_error_count(const berth_error *err);

/* Number of problems of severity BERTH_ERROR; 0 for NULL. */
size_t berth_error_errors(const berth_error *err);

/* The i-th problem, in the order they were found; NULL when out of range. */
const berth_problem *berth_error_get(const berth_error *err, size_t i);

/*
 * Writes one problem as "FILE:LINE:COL: PATH: message" (parts that are
 * unknown are left out, a warning is prefixed "warning: ") into buf of size
 * len, NUL-terminated and truncated if needed. Returns the length the full
 * text needs, as snprintf does.
 */
size_t berth_problem_format(const berth_problem *p, char *buf, size_t len);

/*
 * Orders the problems by file (first appearance), line and column, keeping
 * the order of problems at the same place. NULL is a no-op.
 */
void berth_error_sort(berth_error *err);

/* A short stable name for a code ("syntax", "unknown-key", ...). */
const char *berth_code_name(berth_code code);

/* Process exit status for a code: 0 OK, 2 invalid input, 1 anything else. */
int berth_code_exit_status(berth_code code);

/* HTTP status for a code: 422 invalid input, 413 too big, 500 internal... */
int berth_code_http_status(berth_code code);

/* Did-you-mean: the one of n candidates (NULL entries are skipped) closest
 * to s by edit distance, ignoring case, '_' and '-' (a prefix of 3 or more
 * counts as close), or NULL when none is close enough to suggest. */
const char *berth_suggest(const char *s, const char *const *candidates, size_t n);

#ifdef __cplusplus
}
#endif

#endif
