/*
 * ui.c - the web UI (web/), compiled into the binary like the OpenAPI
 * document: `berth serve` needs no files beside it, and the UI it serves is
 * always the one its API was built with. The UI is plain HTML, CSS and
 * JavaScript modules; there is no build step and nothing is loaded from
 * anywhere but the server (docs/ui.md). Each file is there twice: as written,
 * and gzip-compressed by the build (Makefile: build/ui/NAME.gz), which a
 * browser that accepts gzip gets (a third of the bytes).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server.h"

#define ASSET(sym, file)                                                                         \
	__asm__(".section .rodata\n"                                                             \
		".global " #sym "\n"                                                             \
		#sym ":\n"                                                                       \
		".incbin \"" file "\"\n"                                                         \
		".global " #sym "_end\n"                                                         \
		#sym "_end:\n"                                                                   \
		".byte 0\n"                                                                      \
		".previous\n");                                                                  \
	extern const char sym[], sym##_end[]

ASSET(ui_index_html, "web/index.html");
ASSET(ui_app_js, "web/app.js");
ASSET(ui_app_css, "web/app.css");
ASSET(ui_index_html_gz, BERTH_UI_GZ "/index.html.gz");
ASSET(ui_app_js_gz, BERTH_UI_GZ "/app.js.gz");
ASSET(ui_app_css_gz, BERTH_UI_GZ "/app.css.gz");

/* Whether an Accept-Encoding header takes gzip: a "gzip" (or "*") coding
 * whose q is not 0 ("gzip;q=0" refuses it). */
bool ui_accepts_gzip(const char *accept)
{
	for (const char *p = accept; p && *p;) {
		p += strspn(p, " \t,");
		size_t n = strcspn(p, ",");
		size_t name = strcspn(p, " \t;,");
		if ((name == 4 && !strncasecmp(p, "gzip", 4)) || (name == 1 && *p == '*')) {
			const char *q = p + name;
			const char *end = p + n;
			q += strspn(q, " \t");
			bool zero = false;
			if (q < end && *q == ';') {
				q++;
				q += strspn(q, " \t");
				if (end - q >= 2 && (q[0] == 'q' || q[0] == 'Q') && q[1] == '=')
					zero = strtod(q + 2, NULL) == 0;
			}
			return !zero;
		}
		p += n;
	}
	return false;
}

const ui_asset *ui_find(const char *name)
{
	static const ui_asset assets[] = {
		{"index.html", "text/html; charset=utf-8", ui_index_html, ui_index_html_end,
		 ui_index_html_gz, ui_index_html_gz_end},
		{"app.js", "text/javascript; charset=utf-8", ui_app_js, ui_app_js_end, ui_app_js_gz,
		 ui_app_js_gz_end},
		{"app.css", "text/css; charset=utf-8", ui_app_css, ui_app_css_end, ui_app_css_gz,
		 ui_app_css_gz_end},
	};
	for (size_t i = 0; i < sizeof(assets) / sizeof(assets[0]); i++)
		if (!strcmp(assets[i].name, name))
			return &assets[i];
	return NULL;
}
