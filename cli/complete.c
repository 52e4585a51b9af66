/*
 * complete.c - shell completion: `berth completion bash|zsh|fish` prints a
 * script that asks `berth __complete WORD...` what may come next, and that
 * answer is read from the verbs' grammar (opts.c): verbs, each verb's
 * options, the values an option takes, the words of a verb (get runs, get
 * run), run ids (of this machine's store or of the server, as 'berth get
 * runs' reads them), files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char usage_completion[] =
	"usage: berth completion bash|zsh|fish\n"
	"\n"
	"Prints the script that completes berth's verbs, options, their values and\n"
	"run ids in that shell. Load it from the shell's start-up file:\n"
	"  bash  source <(berth completion bash)        (~/.bashrc)\n"
	"  zsh   source <(berth completion zsh)         (~/.zshrc, after compinit)\n"
	"  fish  berth completion fish | source         (~/.config/fish/config.fish)\n"
	"The script asks berth itself what comes next, so it follows the berth it\n"
	"finds in $PATH.\n";

static const char *const shells[] = {"bash", "zsh", "fish", NULL};

const cli_args args_completion = {
	.opts = (const cli_opt[]){{0}},
	.words = (const cli_word[]){{"bash", CLI_ANY}, {"zsh", CLI_ANY}, {"fish", CLI_ANY},
				    {NULL, CLI_ANY}},
};

const cli_args cli_global_args = {
	.opts = (const cli_opt[]){
		CLI_OPT_SERVER,
		{.name = "--help", .alias = "-h"},
		{.name = "--version", .alias = "-V"},
		{0},
	},
	.arg = CLI_VERB,
};

/* Each script: the words up to the cursor go to berth __complete; a line
 * ":file" asks for file names; the rest are the candidates. */
static const char bash_script[] =
	"# berth completion for bash: source <(berth completion bash)\n"
	"_berth() {\n"
	"\tlocal line=${COMP_LINE:0:COMP_POINT} cur words out c\n"
	"\t# words as berth sees them: '=' does not split them\n"
	"\tread -r -a words <<<\"$line\"\n"
	"\tcur=\n"
	"\t[[ $line == *[[:space:]] ]] || { cur=${words[${#words[@]}-1]}; unset 'words[${#words[@]}-1]'; }\n"
	"\tout=$(berth __complete \"${words[@]:1}\" \"$cur\" 2>/dev/null) || return 0\n"
	"\tCOMPREPLY=()\n"
	"\tlocal IFS=$'\\n'\n"
	"\tfor c in $out; do\n"
	"\t\tif [[ $c == :file ]]; then\n"
	"\t\t\tCOMPREPLY+=($(compgen -f -- \"$cur\"))\n"
	"\t\t\tcompopt -o filenames 2>/dev/null\n"
	"\t\telse\n"
	"\t\t\tCOMPREPLY+=(\"$c\")\n"
	"\t\tfi\n"
	"\tdone\n"
	"\t# bash replaces the text after the last '=' (COMP_WORDBREAKS): so do the candidates\n"
	"\tif [[ $cur == *=* && $COMP_WORDBREAKS == *=* ]]; then\n"
	"\t\tlocal i\n"
	"\t\tfor i in \"${!COMPREPLY[@]}\"; do COMPREPLY[i]=${COMPREPLY[i]#\"${cur%=*}=\"}; done\n"
	"\tfi\n"
	"\treturn 0\n"
	"}\n"
	"complete -F _berth berth\n";

static const char zsh_script[] =
	"#compdef berth\n"
	"# berth completion for zsh: source <(berth completion zsh)\n"
	"_berth() {\n"
	"\tlocal -a cands\n"
	"\tlocal c files=0\n"
	"\tfor c in \"${(@f)$(berth __complete \"${(@)words[2,CURRENT-1]}\" \"${words[CURRENT]}\" 2>/dev/null)}\"; do\n"
	"\t\tif [[ $c == :file ]]; then files=1; elif [[ -n $c ]]; then cands+=(\"$c\"); fi\n"
	"\tdone\n"
	"\t(( files )) && _files\n"
	"\t(( ${#cands} )) && compadd -Q -S '' -- \"${(@)cands}\"\n"
	"\treturn 0\n"
	"}\n"
	"if (( $+functions[compdef] )); then compdef _berth berth; fi\n";

static const char fish_script[] =
	"# berth completion for fish: berth completion fish | source\n"
	"function __berth_complete\n"
	"\tset -l words (commandline -opc)\n"
	"\tset -l cur (commandline -ct)\n"
	"\tfor c in (berth __complete $words[2..-1] \"$cur\" 2>/dev/null)\n"
	"\t\tif test \"$c\" = :file\n"
	"\t\t\t__fish_complete_path \"$cur\"\n"
	"\t\telse\n"
	"\t\t\techo $c\n"
	"\t\tend\n"
	"\tend\n"
	"end\n"
	"complete -c berth -f -a '(__berth_complete)'\n";

int cmd_completion(int argc, char **argv)
{
	const char *shell = argc == 2 ? argv[1] : NULL;
	if (!shell) {
		cli_error("completion: say which shell: bash, zsh or fish");
		return 2;
	}
	if (!strcmp(shell, "bash"))
		fputs(bash_script, stdout);
	else if (!strcmp(shell, "zsh"))
		fputs(zsh_script, stdout);
	else if (!strcmp(shell, "fish"))
		fputs(fish_script, stdout);
	else {
		const char *hint = berth_suggest(shell, shells, 3);
		cli_error("completion: no script for \"%s\" (bash, zsh or fish)%s%s%s", shell,
			  hint ? "; did you mean \"" : "", hint ? hint : "", hint ? "\"?" : "");
		return 2;
	}
	return 0;
}

/* ---- berth __complete WORD... CURRENT ------------------------------------------------ */

/* Prints prefix + c when it starts with what is typed (cur). */
static void say(const char *prefix, const char *c, const char *cur)
{
	char full[512];
	snprintf(full, sizeof(full), "%s%s", prefix, c);
	if (!strncmp(full, cur, strlen(cur)))
		printf("%s\n", full);
}

static void options(const cli_opt *opts, const char *cur)
{
	for (const cli_opt *o = opts; o && o->name; o++) {
		if (o->flags & CLI_HIDDEN)
			continue;
		say("", o->name, cur);
		if (o->alias && strncmp(cur, "--", 2))
			say("", o->alias, cur);
	}
}

static void values(const cli_opt *o, const char *prefix, const char *cur)
{
	const char *v;
	for (size_t i = 0; (v = cli_opt_value(o, i)); i++)
		say(prefix, v, cur);
	if (o->kind == CLI_FILE)
		puts(":file");
}

/* Run ids, newest first, as 'berth get runs' finds them; nothing when it cannot. */
static void run_ids(cli_server *srv, const char *cur)
{
	berth_run_info **list = NULL;
	size_t n = 0;
	berth_run_filter f = {NULL, -1, NULL, 200};
	if (cli_list_runs(srv, &f, &list, &n) == 0)
		for (size_t i = 0; i < n; i++)
			say("", list[i]->id, cur);
	berth_run_info_list_free(list, n);
}

static void argument(cli_kind kind, cli_server *srv, const char *cur)
{
	switch (kind) {
	case CLI_FILE:
		puts(":file");
		break;
	case CLI_RUN:
		run_ids(srv, cur);
		break;
	case CLI_VERB:
		for (size_t i = 0; i < cli_nverbs; i++)
			say("", cli_verbs[i].name, cur);
		break;
	case CLI_ANY:
		break;
	}
}

/* The server the words name (--server URL, --token TOKEN): run ids come from it. */
static void note_server(cli_server *srv, const cli_opt *o, const char *value)
{
	if (!strcmp(o->name, "--server"))
		srv->url = value;
	else if (!strcmp(o->name, "--token"))
		srv->token = value;
}

int cmd_complete(int argc, char **argv)
{
	char **w = argv + 1;
	int n = argc > 1 ? argc - 2 : 0; /* the words before the one at the cursor */
	const char *cur = argc > 1 ? argv[argc - 1] : "";
	cli_server srv = {0};
	const cli_args *a = &cli_global_args;
	const cli_opt *pending = NULL;
	const cli_word *word = NULL;
	int i = 0, positional = 0, dashes = 0;
	/* the options before the verb, then the verb */
	for (; i < n && !pending && w[i][0] == '-'; i++) {
		const cli_opt *o = cli_opt_find(a->opts, w[i]);
		const char *eq = strchr(w[i], '=');
		if (o && o->arg && eq)
			note_server(&srv, o, eq + 1);
		else if (o && o->arg && i + 1 < n)
			note_server(&srv, o, w[++i]);
		else if (o && o->arg)
			pending = o;
	}
	if (i < n && !pending) {
		const cli_verb *v = cli_verb_find(w[i++]);
		if (!v || !v->args)
			return 0;
		a = v->args;
		for (; i < n; i++) {
			if (pending) {
				note_server(&srv, pending, w[i]);
				pending = NULL;
			} else if (!dashes && !strcmp(w[i], "--")) {
				dashes = 1;
			} else if (!dashes && w[i][0] == '-' && w[i][1]) {
				const cli_opt *o = cli_opt_find(a->opts, w[i]);
				const char *eq = strchr(w[i], '=');
				if (o && o->arg && eq)
					note_server(&srv, o, eq + 1);
				else if (o && o->arg && !(o->flags & CLI_EQ))
					pending = o;
			} else if (!positional++ && a->words) {
				word = cli_word_find(a->words, w[i]);
			}
		}
	}
	if (pending) {
		values(pending, "", cur);
		return 0;
	}
	if (!dashes && cur[0] == '-') {
		const char *eq = strchr(cur, '=');
		const cli_opt *o = eq ? cli_opt_find(a->opts, cur) : NULL;
		if (o && o->arg) {
			char prefix[64];
			snprintf(prefix, sizeof(prefix), "%.*s=", (int)(eq - cur), cur);
			values(o, prefix, cur);
		} else if (!eq)
			options(a->opts, cur);
		return 0;
	}
	if (a == &cli_global_args) {
		argument(CLI_VERB, &srv, cur);
		return 0;
	}
	if (a->words && !positional) {
		for (const cli_word *k = a->words; k->name; k++)
			say("", k->name, cur);
		return 0;
	}
	argument(a->words ? (word ? word->arg : CLI_ANY) : a->arg, &srv, cur);
	return 0;
}
