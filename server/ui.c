/*
 * ui.c - the web UI (web/), compiled into the binary like the OpenAPI
 * document: `berth serve` needs no files beside it, and the UI it serves is
 * always the one its API was built with. The UI is plain HTML, CSS and
 * JavaScript modules; there is no build step and nothing is loaded from
 * anywhere but the server (docs/ui.md).
 */
#include <string.h>

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

const ui_asset *ui_find(const char *name)
{
	static const ui_asset assets[] = {
		{"index.html", "text/html; charset=utf-8", ui_index_html, ui_index_html_end},
		{"app.js", "text/javascript; charset=utf-8", ui_app_js, ui_app_js_end},
		{"app.css", "text/css; charset=utf-8", ui_app_css, ui_app_css_end},
	};
	for (size_t i = 0; i < sizeof(assets) / sizeof(assets[0]); i++)
		if (!strcmp(assets[i].name, name))
			return &assets[i];
	return NULL;
}
