#include "berth/berth.h"

#ifndef BERTH_VERSION
#define BERTH_VERSION "0.0.0"
#endif

const char *berth_version(void)
{
	return BERTH_VERSION;
}
