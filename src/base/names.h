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
/* No control characters (bytes below 0x20, and 0x7f): for the strings that
 * reach a path or a name and have no stricter rule. */
const char *berth_check_printable(const char *s);

#endif
