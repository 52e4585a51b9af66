/*
 * banned.h - libc calls that are too easy to get wrong, banned at compile
 * time in libberth (after git's banned.h). Use the berth_buf helpers,
 * snprintf, strtol/strtoull with checks, and strtok_r-free parsing instead.
 */
#ifndef BERTH_BANNED_H
#define BERTH_BANNED_H

#define BERTH_BANNED(func) sorry_##func##_is_banned_in_berth

#undef strcpy
#define strcpy(x, y) BERTH_BANNED(strcpy)
#undef strcat
#define strcat(x, y) BERTH_BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) BERTH_BANNED(strncpy)
#undef sprintf
#define sprintf(...) BERTH_BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BERTH_BANNED(vsprintf)
#undef atoi
#define atoi(x) BERTH_BANNED(atoi)
#undef atol
#define atol(x) BERTH_BANNED(atol)
#undef strtok
#define strtok(x, y) BERTH_BANNED(strtok)
#undef gets
#define gets(x) BERTH_BANNED(gets)

#endif
