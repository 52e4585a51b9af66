/*
 * names.h - Kubernetes name rules (DNS-1123, qualified names, label values,
 * environment variable names), cron schedules, and did-you-mean.
 *
 * Each check returns NULL when s is valid, or a static phrase saying what
 * is wrong, to follow the quoted value in a message ("\"Train\" is not a
 * valid name: <phrase>").
 */
#ifndef BERTH_NAMES_H
#define BERTH_NAMES_H

#include <stddef.h>

#include "berth/error.h" /* berth_suggest, the did-you-mean of messages */

const char *berth_check_dns_label(const char *s);      /* RFC 1123 label, <= 63 */
const char *berth_check_dns_subdomain(const char *s);  /* RFC 1123 subdomain, <= 253 */
const char *berth_check_qualified_name(const char *s); /* [prefix/]name: label keys */
const char *berth_check_label_value(const char *s);
/* An object name that is also a label's value: a LocalQueue, which a Job
 * names in its label kueue.x-k8s.io/queue-name (a subdomain of <= 63). */
const char *berth_check_labelled_name(const char *s);
const char *berth_check_env_name(const char *s);
const char *berth_check_cron(const char *s);           /* 5 fields or @daily... */
const char *berth_check_port_name(const char *s);      /* IANA_SVC_NAME */
const char *berth_check_secret_key(const char *s);     /* a Secret's key: a platform secret's name */
/* A name as the environment variable berth makes of it (docs/runspec.md,
 * "Secrets"; a volume's BERTH_VOLUME_<NAME>): upper-cased, each character
 * that is not a letter or a digit made '_', after a '_' when it starts with
 * a digit: the secret "my-secret-key" is MY_SECRET_KEY, "hf.token"
 * HF_TOKEN, "1pw" _1PW. Always a C identifier, which every shell reads; the
 * secret's name as is stays a Secret's key and a file's name. Writes at
 * most len bytes, NUL included, to out, and returns out. */
char *berth_env_name_from(const char *name, char *out, size_t len);
#define BERTH_ENV_NAME_MAX 256 /* a secret's name (253 bytes at most), a '_' and the NUL */
/* No control characters (bytes below 0x20, and 0x7f): for the strings that
 * reach a path or a name and have no stricter rule. */
const char *berth_check_printable(const char *s);

#endif
