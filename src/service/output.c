/*
 * output.c - the services' trees as YAML or JSON (see output.h).
 */
#include "service/output.h"

int service_output(const obuild *b, const onode *top, berth_format fmt, char **out, size_t *len,
		   berth_error **err)
{
	*out = NULL;
	*len = 0;
	if (b->failed || !top)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	berth_buf buf = BERTH_BUF_INIT;
	if (fmt == BERTH_FORMAT_JSON)
		emit_json(&buf, top, 0, 1);
	else
		emit_yaml(&buf, top);
	if (buf.failed) {
		berth_buf_release(&buf);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	*len = buf.len;
	*out = berth_buf_detach(&buf);
	return 0;
}
