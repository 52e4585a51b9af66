/*
 * man.c - berth(1), the manual page, made of what 'berth help' prints: the
 * verbs' summaries, then each verb's help (its usage_* text), with its usage
 * lines as the synopsis and its option lines ("  --flag VALUE  what") as
 * tagged paragraphs. `berth help --man`, `make man` (build/berth.1).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* Text as troff reads it: '\' written as "\e", '-' as "\-" (a minus in an
 * option, not a hyphen), and a line that starts with '.' or '\'' escaped. */
static void text(FILE *out, const char *s, size_t n, bool line_start)
{
	for (size_t i = 0; i < n; i++) {
		if (line_start && i == 0 && (s[0] == '.' || s[0] == '\''))
			fputs("\\&", out);
		if (s[i] == '\\')
			fputs("\\e", out);
		else if (s[i] == '-')
			fputs("\\-", out);
		else
			fputc(s[i], out);
	}
}

static void line(FILE *out, const char *s, size_t n)
{
	text(out, s, n, true);
	fputc('\n', out);
}

/* Where the description of an option line starts (two spaces or more after
 * the option), or 0 when it has none on this line. */
static size_t description_at(const char *s, size_t n)
{
	for (size_t i = 2; i + 1 < n; i++)
		if (s[i] == ' ' && s[i + 1] == ' ') {
			size_t d = i;
			while (d < n && s[d] == ' ')
				d++;
			return d < n ? d : 0;
		}
	return 0;
}

/* One verb's help as a section: usage lines, paragraphs, options. */
static void verb_page(FILE *out, const cli_verb *v)
{
	fprintf(out, ".SS %s\n", v->name);
	const char *p = v->usage;
	bool usage = true, tagged = false;
	while (*p) {
		size_t n = strcspn(p, "\n");
		const char *next = p + n + (p[n] == '\n');
		if (usage && !strncmp(p, "usage: ", 7)) {
			fputs(".nf\n", out);
			line(out, p + 7, n - 7);
		} else if (usage && n && p[0] == ' ') {
			/* a usage line that goes on */
			size_t k = strspn(p, " ");
			line(out, p + k, n - k);
		} else if (!n) {
			if (usage)
				fputs(".fi\n", out);
			usage = false;
			tagged = false;
			fputs(".PP\n", out);
		} else if (p[0] == ' ' && p[1] == ' ' && p[2] == '-') {
			/* an option: its name and value, then what it does */
			size_t d = description_at(p, n);
			fputs(".TP\n.B ", out);
			line(out, p + 2, (d ? d : n) - 2);
			if (d)
				line(out, p + d, n - d);
			tagged = true;
		} else if (tagged && p[0] == ' ') {
			size_t k = strspn(p, " ");
			line(out, p + k, n - k);
		} else if (p[0] == ' ') {
			/* an example or a table: as it is */
			fputs(".nf\n", out);
			line(out, p, n);
			fputs(".fi\n", out);
		} else {
			line(out, p, n);
		}
		p = next;
	}
	if (usage)
		fputs(".fi\n", out);
}

void cli_man(FILE *out)
{
	fprintf(out,
		".TH BERTH 1 \"\" \"berth %s\" \"User Commands\"\n"
		".SH NAME\n"
		"berth \\- run AI workloads with the hardware they declare\n"
		".SH SYNOPSIS\n"
		".B berth\n"
		"[\\-\\-server \\fIURL\\fR] [\\-\\-token \\fITOKEN\\fR] \\fIVERB\\fR [\\fIARGS\\fR...]\n"
		".SH DESCRIPTION\n"
		"berth merges a run spec with the platform policy, refuses what is wrong with\n"
		"a precise message, and runs it on this machine (the local backend) or on a\n"
		"Kubernetes cluster; \\fBberth serve\\fR serves the same to a team over HTTP.\n"
		".SH VERBS\n",
		berth_version());
	for (size_t i = 0; i < cli_nverbs; i++) {
		fprintf(out, ".TP\n.B %s\n", cli_verbs[i].name);
		line(out, cli_verbs[i].summary, strlen(cli_verbs[i].summary));
	}
	fputs(".SH COMMANDS\n", out);
	for (size_t i = 0; i < cli_nverbs; i++)
		verb_page(out, &cli_verbs[i]);
	fputs(".SH ENVIRONMENT\n"
	      ".TP\n.B BERTH_HOME\n"
	      "the data dir of this machine's runs (default ~/.berth)\n"
	      ".TP\n.B BERTH_CONFIG\n"
	      "the platform policy (else /etc/berth/config.yaml, else built-in defaults)\n"
	      ".TP\n.B BERTH_SERVER, BERTH_TOKEN, BERTH_CACERT\n"
	      "a berth server to send the work to, its bearer token, and the CAs (PEM) of its certificate\n"
	      ".TP\n.B NO_COLOR\n"
	      "set and not empty: no colours, also on a terminal\n"
	      ".SH EXIT STATUS\n"
	      "0 success, 2 invalid input (spec, policy, flags), 1 anything else.\n"
	      ".SH SEE ALSO\n"
	      "\\fBkubectl\\fR(1); docs/cli\\-server.md and docs/migrating.md in berth's sources\n",
	      out);
}
