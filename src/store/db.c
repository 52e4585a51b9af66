/*
 * db.c - which driver a store's location names, and that location as it may
 * be shown (db.h).
 */
#include <string.h>

#include "base/internal.h"
#include "store/db.h"

static bool is_url(const char *where)
{
	return !strncmp(where, "postgresql://", 13) || !strncmp(where, "postgres://", 11);
}

const db_ops *db_driver(const char *where)
{
	return where && is_url(where) ? &db_pg_ops : &db_sqlite_ops;
}

/* A URL's user:password@ is user@; a query's password=... is password=***,
 * and so is any other ...password= (sslpassword: the client key's passphrase;
 * libpq's URLs take any parameter there). A path is shown as it is. */
char *db_display(const char *where)
{
	if (!is_url(where))
		return berth_strdup(where);
	berth_buf b = BERTH_BUF_INIT;
	const char *rest = strstr(where, "://") + 3;
	berth_buf_append(&b, where, (size_t)(rest - where));
	const char *at = strpbrk(rest, "@/?");
	if (at && *at == '@') {
		const char *colon = memchr(rest, ':', (size_t)(at - rest));
		berth_buf_append(&b, rest, (size_t)((colon ? colon : at) - rest));
		rest = at; /* from the @ on */
	}
	const char *q = strchr(rest, '?');
	berth_buf_append(&b, rest, q ? (size_t)(q - rest) : strlen(rest));
	while (q && *q) {
		const char *end = strchr(q + 1, '&');
		size_t n = end ? (size_t)(end - q) : strlen(q);
		const char *eq = memchr(q + 1, '=', n - 1);
		size_t name = eq ? (size_t)(eq - q - 1) : 0;
		if (name >= 8 && !strncmp(eq - 8, "password", 8)) {
			berth_buf_append(&b, q, name + 2);
			berth_buf_puts(&b, "***");
		} else
			berth_buf_append(&b, q, n);
		q = end;
	}
	return b.failed ? (berth_buf_release(&b), NULL) : berth_buf_detach(&b);
}
