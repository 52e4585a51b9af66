/*
 * launch.c - how a local run will be started, decided when it is submitted
 * and kept in its record for its supervisor: the command and its arguments,
 * the user and groups (as root: the project's uid from the policy's range),
 * HOME and the environment, the volume table, the work dir, the limits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/local/local.h"
#include "base/internal.h"
#include "plan/distributed.h"
#include "plan/policy_internal.h"
#include "render/render_internal.h"

/* The home and name of uid from the user database, looked up once per handle
 * and uid (the server submits every run as the same user): *out is NULL when
 * the database has no such user; -1 when out of memory. */
static int user_of(local_state *ls, uid_t uid, const local_user **out)
{
	local_user *u = &ls->user;
	*out = NULL;
	if (!u->known || u->uid != uid) {
		free(u->home);
		free(u->name);
		memset(u, 0, sizeof(*u));
		struct passwd pw, *found = NULL;
		char buf[16384]; /* glibc's own getpwuid starts at 1024 */
		if (getpwuid_r(uid, &pw, buf, sizeof(buf), &found) || !found)
			return 0;
		u->home = berth_strdup(pw.pw_dir);
		u->name = berth_strdup(pw.pw_name);
		if (!u->home || !u->name)
			return -1;
		u->uid = uid;
		u->known = true;
	}
	*out = u;
	return 0;
}

static int add_env(berth_buf *env, const char *name, const char *value)
{
	berth_buf_printf(env, "%s=%s", name, value ? value : "");
	return berth_buf_append(env, "", 1);
}

/* One field of the volume table: a string of berth's, or a spec's string,
 * which cannot hold a NUL (the reader refuses one), so it is never syntax. */
static void vol_field(berth_buf *out, const char *s)
{
	berth_buf_append(out, s, strlen(s) + 1);
}

/* The volumes as the supervisor reads them (store.h: six NUL-terminated
 * fields each), checked now. */
static int plan_volumes(berth_backend *b, const local_state *ls, const berth_run *run, berth_buf *out,
			berth_error **err)
{
	const berth_spec *s = &run->spec;
	const char *project = s->project.s ? s->project.s : "default";
	for (size_t i = 0; i < s->nvolumes; i++) {
		const berth_volume *v = &s->volumes[i];
		char dir[4096], size[24];
		const char *kind = "dir", *life = "run";
		int bad = 0;
		snprintf(size, sizeof(size), "%lld", v->size.set ? (long long)berth_quantity_value(&v->size.q) : 0LL);
		switch (v->type) {
		case BERTH_VOLUME_PVC:
			bad = fs_path(dir, sizeof(dir), b->home, "volumes/%s/%s", run->id, v->name.s);
			if (ls->keep_volumes)
				life = "keep";
			break;
		case BERTH_VOLUME_EMPTY_DIR:
			bad = fs_path(dir, sizeof(dir), b->home, "volumes/%s/%s", run->id, v->name.s);
			if (v->medium.s && !strcmp(v->medium.s, "Memory"))
				kind = "tmpfs";
			break;
		case BERTH_VOLUME_SHARED:
			/* a claim is the project's: another project's of the same name is another */
			bad = fs_path(dir, sizeof(dir), b->home, "volumes/shared/%s/%s", project, v->ref.s);
			life = "keep";
			break;
		case BERTH_VOLUME_CONFIG_MAP: {
			struct stat st;
			bad = fs_path(dir, sizeof(dir), b->home, "configmaps/%s", v->ref.s);
			if (!bad && (stat(dir, &st) || !S_ISDIR(st.st_mode)))
				return berth_fail(err, BERTH_EPOLICY,
						  "volumes[%zu]: config_map \"%s\" does not exist on this machine "
						  "(the local backend's ConfigMaps are the directories of %s/configmaps)",
						  i, v->ref.s, b->home);
			kind = "ro";
			life = "keep";
			break;
		}
		case BERTH_VOLUME_SECRET:
			bad = snprintf(dir, sizeof(dir), "%s", v->ref.s) >= (int)sizeof(dir);
			kind = "secret";
			life = "keep";
			break;
		}
		if (bad)
			return berth_fail(err, BERTH_EINVALID, "volumes[%zu]: the volume's path is too long", i);
		vol_field(out, kind);
		vol_field(out, v->name.s);
		vol_field(out, dir);
		vol_field(out, v->mount_path.s);
		vol_field(out, life);
		vol_field(out, size);
	}
	return 0;
}

/* A distributed run's worker variables (plan_worker_env): worker 0 is on this
 * machine's loopback, at the spec's port, else at one its supervisor picks
 * free when the workers start ({port}); {rank} is each worker's index. */
static int plan_worker_table(const berth_run *run, berth_buf *out)
{
	const berth_spec *s = &run->spec;
	worker_env we[WORKER_ENV_MAX];
	int n = plan_worker_env(s, "127.0.0.1", s->dist_port.set ? NULL : "{port}", run->arena, we);
	for (int i = 0; i < n; i++) {
		berth_buf_printf(out, "%s=%s", we[i].name, we[i].rank ? "{rank}" : we[i].value);
		berth_buf_append(out, "", 1);
	}
	return n < 0 ? -1 : 0;
}

static const char *const passed_env[] = {"PATH", "LANG", "LC_ALL", "TZ", "TERM"};

/* Fills r with what the supervisor needs, refusing what this machine cannot do. */
int local_plan_launch(berth_backend *b, local_state *ls, const berth_run *run, store_run *r,
		      berth_error **err)
{
	const berth_spec *s = &run->spec;
	if (s->action == BERTH_ACTION_CRONJOB)
		return berth_fail(err, BERTH_EPOLICY,
				  "action \"cronjob\" needs a scheduler the local backend does not have; "
				  "run it with --backend kubernetes, or as a job from cron");
	if (!s->function.command.n)
		return berth_fail(err, BERTH_EMISSING,
				  "function.command: the local backend runs the command on this machine "
				  "and does not read the image's entrypoint; give the command");
	bool root = geteuid() == 0;
	const berth_int *ids[] = {&s->run_as_user, &s->run_as_group, &s->fs_group};
	static const char *const idname[] = {"run_as_user", "run_as_group", "fs_group"};
	for (int i = 0; i < 3; i++)
		if (ids[i]->set && !root &&
		    ids[i]->v != (i == 0 ? (int64_t)geteuid() : (int64_t)getegid()))
			return berth_fail(err, BERTH_EPOLICY,
					  "%s: %lld asked, but berth runs as uid %ld, not root, and cannot "
					  "switch users; run berth as root or leave %s out",
					  idname[i], (long long)ids[i]->v, (long)geteuid(), idname[i]);
	/* as root, the uids of local.uid_range are berth's, one per project: no
	 * spec may take another project's */
	int64_t umin = 0, umax = -1;
	berth_policy_uid_range(b->policy, &umin, &umax);
	for (int i = 0; i < 3; i++)
		if (ids[i]->set && root && ids[i]->v >= umin && ids[i]->v <= umax)
			return berth_fail(err, BERTH_EPOLICY,
					  "%s: %lld is one of the ids berth gives each project's runs "
					  "(local.uid_range %lld-%lld); ask for an id outside it, or leave "
					  "%s out", idname[i], (long long)ids[i]->v, (long long)umin,
					  (long long)umax, idname[i]);
	if (run->run_as_non_root && s->run_as_user.set && s->run_as_user.v == 0)
		return berth_fail(err, BERTH_EPOLICY,
				  "security.disable_root: the run would run as root; set run_as_user "
				  "to a non-zero uid");
	/* who it runs as: the spec's user; as root with none, its project's own
	 * uid, which no other project's runs have; else berth's own */
	int64_t uid = s->run_as_user.set ? s->run_as_user.v : -1;
	if (root && uid < 0) {
		int rc = store_project_uid(b->st, s->project.s ? s->project.s : "default", umin, umax,
					   &uid, err);
		if (rc)
			return rc;
	}
	bool dynamic = !s->run_as_user.set && uid >= 0;
	/* a run as another user than berth's works in a directory of its own
	 * (runs/ID/work, its HOME too when the user has no home); as berth's own
	 * user, where it was started from */
	char work[4096];
	bool own_dir = uid >= 0 && uid != (int64_t)geteuid();
	if (backend_run_path(work, sizeof(work), b->home, run->id, "work"))
		return berth_fail(err, BERTH_EINVALID, "the data dir's path is too long");
	berth_buf argv = BERTH_BUF_INIT, env = BERTH_BUF_INIT, vols = BERTH_BUF_INIT,
		  secrets = BERTH_BUF_INIT, workers = BERTH_BUF_INIT;
	for (size_t i = 0; i < s->function.command.n; i++)
		berth_buf_append(&argv, s->function.command.items[i].s,
				 strlen(s->function.command.items[i].s) + 1);
	for (size_t i = 0; i < s->args.n; i++)
		berth_buf_append(&argv, s->args.items[i].s, strlen(s->args.items[i].s) + 1);
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(passed_env); i++)
		if (getenv(passed_env[i]))
			add_env(&env, passed_env[i], getenv(passed_env[i]));
	const local_user *u = NULL;
	if (!dynamic && user_of(ls, uid >= 0 ? (uid_t)uid : geteuid(), &u))
		env.failed = -BERTH_ENOMEM;
	add_env(&env, "HOME", u ? u->home : own_dir ? work : "/");
	if (u)
		add_env(&env, "USER", u->name);
	for (size_t i = 0; i < s->envs.n; i++)
		add_env(&env, s->envs.items[i].key.s, s->envs.items[i].value.s);
	add_env(&env, "BERTH_RUN_ID", run->id);
	if (s->inputs) {
		const char *json = render_inputs_json(s->inputs, run->arena);
		if (!json)
			env.failed = -BERTH_ENOMEM;
		add_env(&env, "BERTH_INPUTS", json);
	}
	for (size_t i = 0; i < s->secrets.n; i++)
		berth_buf_printf(&secrets, "%s%s", i ? "," : "", s->secrets.items[i].s);
	int rc = plan_volumes(b, ls, run, &vols, err);
	if (!rc && (argv.failed || env.failed || vols.failed || secrets.failed ||
		    plan_worker_table(run, &workers) || workers.failed))
		rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	if (rc) {
		berth_buf_release(&workers);
		berth_buf_release(&argv);
		berth_buf_release(&env);
		berth_buf_release(&vols);
		berth_buf_release(&secrets);
		return rc;
	}
	r->argv_len = argv.len;
	r->argv = berth_buf_detach(&argv);
	r->env_len = env.len;
	r->env = berth_buf_detach(&env);
	r->volumes_len = vols.len;
	r->volumes = vols.len ? berth_buf_detach(&vols) : NULL;
	r->secret_env = secrets.len ? berth_buf_detach(&secrets) : NULL;
	r->launcher = s->launcher.s ? berth_strdup(s->launcher.s) : NULL;
	r->worker_env_len = workers.len;
	r->worker_env = workers.len ? berth_buf_detach(&workers) : NULL;
	berth_buf_release(&workers);
	berth_buf_release(&vols);
	berth_buf_release(&secrets);
	char cwd[4096];
	r->workdir = berth_strdup(own_dir ? work : getcwd(cwd, sizeof(cwd)) ? cwd : "/");
	r->uid = uid;
	r->gid = s->run_as_group.set ? s->run_as_group.v : -1;
	r->fs_group = s->fs_group.set ? s->fs_group.v : -1;
	r->timeout = s->timeout.set ? s->timeout.v : 0;
	r->retries = s->retries.set ? s->retries.v : 0;
	r->restart = s->action != BERTH_ACTION_JOB;
	r->grace = ls->grace_s;
	r->keep_volumes = ls->keep_volumes;
	r->pids_max = run->pids_max;
	const berth_resource *disk = &s->resources.disk;
	r->disk_limit = disk->limits.set     ? berth_quantity_value(&disk->limits.q)
			: disk->requests.set ? berth_quantity_value(&disk->requests.q)
					     : 0;
	return r->workdir ? 0 : berth_fail(err, BERTH_ENOMEM, "out of memory");
}

