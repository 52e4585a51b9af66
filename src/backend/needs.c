/*
 * needs.c - what a backend kind needs of a planned run that it cannot have:
 * one check, for every face that says whether a run would run (validate,
 * explain, render, run and its dry run, the server's validate and runs).
 */
#include <stdlib.h>
#include <string.h>

#include "backend/runtime.h"
#include "base/internal.h"

/* A problem about a field the run does not have: at the function, where the
 * user would add it. */
static void missing(berth_error **err, const berth_run *run, const char *path, const char *why)
{
	const berth_spec *s = &run->spec;
	const berth_str *at = s->function.name.s ? &s->function.name : NULL;
	uint8_t o = at ? at->origin : BERTH_ORIGIN_RUN;
	const char *file = o <= BERTH_ORIGIN_RULE ? run->origin_file[o] : NULL;
	berth_where w = {file ? file : s->file ? s->file : "<run>", file && at ? at->pos.line : 0,
			 file && at ? at->pos.column : 0, path};
	berth_problem_add(err, BERTH_EMISSING, BERTH_ERROR, &w, "run \"%s\" %s", run->base_name, why);
}

/* backend_needs; a cluster's objects go to into when it is not NULL. */
static int needs(const char *kind, const local_node *node, const berth_run *run,
		 berth_arena *arena, berth_render *into, berth_error **err)
{
	const berth_spec *s = &run->spec;
	size_t errors = berth_error_errors(*err), before = berth_error_count(*err);
	if (kind && !strcmp(kind, "kubernetes")) {
		if (!s->function.image.s) {
			missing(err, run, "function.image",
				"needs an image on Kubernetes: the cluster pulls it and runs "
				"function.command in it, or its entrypoint");
		} else {
			/* what only the objects say (a launcher the policy's operator
			 * cannot run, mpirun without a command): the objects are made,
			 * and dropped */
			berth_render *rd = into ? into : berth_render_new(BERTH_FORMAT_YAML);
			if (!rd)
				return berth_fail(err, BERTH_ENOMEM, "out of memory");
			berth_render_add(rd, run, err);
			if (rd != into)
				berth_render_free(rd);
		}
	} else {
		if (s->action == BERTH_ACTION_CRONJOB) {
			berth_where w = {s->action_name.origin <= BERTH_ORIGIN_RULE &&
						 run->origin_file[s->action_name.origin]
					 ? run->origin_file[s->action_name.origin]
					 : s->file ? s->file : "<run>",
					 s->action_name.pos.line, s->action_name.pos.column, "action"};
			berth_problem_add(err, BERTH_EPOLICY, BERTH_ERROR, &w,
					  "action \"cronjob\" needs a scheduler the local backend does not "
					  "have; run it with --backend kubernetes, or as a job from cron");
		}
		if (!s->function.command.n)
			missing(err, run, "function.command",
				"needs a command on the local backend, which runs it on this "
				"machine and does not read the image's entrypoint; give the command");
		if (node)
			local_node_refuse(node, run, arena, err);
	}
	if (berth_error_errors(*err) == errors)
		return 0;
	/* the code of the first new problem */
	for (size_t i = before; i < berth_error_count(*err); i++) {
		const berth_problem *p = berth_error_get(*err, i);
		if (p->severity == BERTH_ERROR)
			return -(int)p->code;
	}
	return -BERTH_EPOLICY;
}

int backend_needs(const char *kind, const local_node *node, const berth_run *run,
		  berth_arena *arena, berth_error **err)
{
	return needs(kind, node, run, arena, NULL, err);
}

int berth_run_needs_render(const berth_run *run, berth_render *rd, berth_error **err)
{
	return needs("kubernetes", NULL, run, NULL, rd, err);
}

int berth_run_needs(const berth_run *run, const char *kind, const berth_policy *policy,
		    berth_error **err)
{
	if (kind && strcmp(kind, "local") && strcmp(kind, "kubernetes"))
		return berth_fail(err, BERTH_EARG, "no backend \"%s\" (local or kubernetes)", kind);
	if (kind && !strcmp(kind, "kubernetes"))
		return backend_needs(kind, NULL, run, NULL, err);
	berth_arena *arena = berth_arena_new();
	char *home = backend_default_home();
	local_node node;
	memset(&node, 0, sizeof(node));
	const char *gpu_dir = getenv("BERTH_GPU_DIR");
	int rc;
	if (!arena || !home)
		rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	else if ((rc = local_node_detect(&node, arena, home,
					 gpu_dir ? gpu_dir : "/proc/driver/nvidia/gpus", err)))
		;
	else if (policy && local_node_from_policy(&node, arena, policy))
		rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	else
		rc = backend_needs("local", &node, run, arena, err);
	free(home);
	berth_arena_free(arena);
	return rc;
}
