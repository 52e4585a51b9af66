/*
 * plan.c - what render, explain, validate and profiles share: the policy
 * flag, the spec files, planning each run against the policy, and the -o of
 * explain and profiles.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_flag(int argc, char **argv, int *i, const char *name, const char **value)
{
	const char *a = argv[*i];
	size_t n = strlen(name);
	if (strncmp(a, name, n) || (a[n] && a[n] != '='))
		return 0;
	if (a[n] == '=')
		*value = a + n + 1;
	else if (*i + 1 < argc)
		*value = argv[++*i];
	else {
		cli_error("option %s needs a value", a);
		return -1;
	}
	return 1;
}

int cli_plan_flag(cli_plan_opts *o, int argc, char **argv, int *i)
{
	static const struct {
		const char *name;
		size_t off;
	} flags[] = {
		{"--config", offsetof(cli_plan_opts, config)},
		{"--run-id", offsetof(cli_plan_opts, run_id)},
		{"-o", offsetof(cli_plan_opts, output)},
		{"--output", offsetof(cli_plan_opts, output)},
		{"--secrets", offsetof(cli_plan_opts, secrets)},
	};
	for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
		int r = cli_flag(argc, argv, i, flags[k].name,
				 (const char **)((char *)o + flags[k].off));
		if (r)
			return r;
	}
	return 0;
}

int cli_plan_load(cli_plan_opts *o, berth_policy **policy)
{
	berth_error *err = NULL;
	int ret = berth_policy_load(policy, o->config, &err);
	int st = cli_report(err);
	berth_error_free(err);
	if (ret < 0)
		return st ? st : 1;
	/* --secrets a,b,c: the project's secret names, checked like the server checks its store */
	if (o->secrets) {
		char *copy = strdup(o->secrets);
		size_t n = 1;
		for (const char *p = o->secrets; *p; p++)
			n += *p == ',';
		o->secret_names = calloc(n, sizeof(char *));
		if (!copy || !o->secret_names) {
			free(copy);
			cli_error("out of memory");
			return 1;
		}
		o->secret_copy = copy;
		for (char *p = copy, *comma; p; p = comma ? comma + 1 : NULL) {
			comma = strchr(p, ',');
			if (comma)
				*comma = '\0';
			if (*p)
				o->secret_names[o->nsecret_names++] = p;
		}
	}
	return 0;
}

int cli_plan_open(cli_plan_opts *o, const char *path, berth_policy **policy, berth_spec_set **set)
{
	berth_error *err = NULL;
	int status = cli_plan_load(o, policy);
	if (status)
		return status;
	/* warnings of a valid spec are shown too */
	int ret = berth_spec_parse_file(set, path, &err);
	int st = cli_report(err);
	if (ret < 0)
		status = st ? st : 1;
	berth_error_free(err);
	return status;
}

void cli_plan_release(cli_plan_opts *o)
{
	free(o->secret_names);
	free(o->secret_copy);
	o->secret_names = NULL;
	o->secret_copy = NULL;
}

/* Parses flags and the one SPEC argument; returns -1 after a usage error. */
int cli_plan_args(const char *verb, cli_plan_opts *o, cli_server *srv, int argc, char **argv,
		  const char **spec)
{
	*spec = NULL;
	for (int i = 1; i < argc; i++) {
		int r = cli_plan_flag(o, argc, argv, &i);
		if (!r)
			r = cli_flag(argc, argv, &i, "--backend", &o->backend);
		if (!r && srv)
			r = cli_server_flag(srv, argc, argv, &i);
		if (!r && srv)
			r = cli_flag(argc, argv, &i, "--project", &o->project);
		if (r < 0)
			return -1;
		if (r)
			continue;
		if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("%s: unknown option \"%s\" (see 'berth help %s')", verb, argv[i], verb);
			return -1;
		}
		if (*spec) {
			cli_error("%s: one spec file at a time (use '-' and a stream for several runs)", verb);
			return -1;
		}
		*spec = argv[i];
	}
	if (!*spec) {
		cli_error("%s: no spec given (use '-' for standard input)", verb);
		return -1;
	}
	return 0;
}

int cli_plan_run(cli_plan_opts *o, const berth_policy *policy, const berth_spec *spec, size_t index,
		 berth_run **run, berth_error **err)
{
	berth_run_opts ro;
	char id[40];
	memset(&ro, 0, sizeof(ro));
	if (o->run_id) {
		/* one id for a stream: the first run gets it, the next ID-2, ID-3, ... */
		berth_run_id_nth(id, sizeof(id), o->run_id, index);
		ro.run_id = id;
	}
	ro.secrets = (const char *const *)o->secret_names;
	ro.nsecrets = o->nsecret_names;
	ro.check_secrets = o->secrets != NULL || o->check_secrets;
	ro.usage = o->usage;
	ro.no_notes = o->render != NULL; /* objects only: no explanation is shown */
	int rc = berth_run_plan(run, spec, policy, &ro, err);
	/* what the backend needs: every problem at once, also of a refused run */
	if (o->backend && *run && rc != -BERTH_ENOMEM && rc != -BERTH_EARG && rc != -BERTH_EIO) {
		int r2 = o->render && !strcmp(o->backend, "kubernetes")
				 ? berth_run_needs_render(*run, o->render, err)
				 : berth_run_needs(*run, o->backend, policy, err);
		rc = rc ? rc : r2;
	}
	return rc;
}

/* -o table|yaml|json of explain and profiles (NULL: table). */
int cli_explain_format(const char *verb, const char *o, berth_explain_format *fmt)
{
	if (!o || !strcmp(o, "table"))
		*fmt = BERTH_EXPLAIN_TABLE;
	else if (!strcmp(o, "yaml"))
		*fmt = BERTH_EXPLAIN_YAML;
	else if (!strcmp(o, "json"))
		*fmt = BERTH_EXPLAIN_JSON;
	else {
		cli_error("%s: -o takes table, yaml or json, not \"%s\"", verb, o);
		return -1;
	}
	return 0;
}

/* A document berth_explain or its kin made (ret, data, len, err): printed,
 * or its problems reported. */
int cli_print_doc(int ret, char *data, size_t len, berth_error *err)
{
	if (ret < 0)
		return cli_report(err);
	fwrite(data, 1, len, stdout);
	free(data);
	return 0;
}
