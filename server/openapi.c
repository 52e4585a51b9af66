/*
 * openapi.c - the OpenAPI document (server/openapi.json), compiled in so
 * that the binary serves exactly the document of its own routes.
 */
#include <stddef.h>

#include "server.h"

__asm__(".section .rodata\n"
	".global openapi_json\n"
	".type openapi_json, @object\n"
	"openapi_json:\n"
	".incbin \"server/openapi.json\"\n"
	".global openapi_json_end\n"
	"openapi_json_end:\n"
	".byte 0\n"
	".previous\n");

extern const char openapi_json_end[];

size_t openapi_json_len(void)
{
	return (size_t)(openapi_json_end - openapi_json);
}
