// SPDX-License-Identifier: MIT
/*
 * prof_tool.c - a profiling tool written the way the OpenSHMEM profiling
 * interface means it: it defines the shmem_ routines it observes (the
 * list in prof_tool.h), counts each call and does the work through the
 * routine's pshmem_ twin from <pshmem.h>.  It knows nothing of hpsync.
 *
 * Built three ways (CMakeLists.txt): linked into the test program with the
 * shared library (the program's definitions win by ELF interposition),
 * into the program with the static library (its strong definitions win
 * over the library's weak shmem_ names), and as a library of its own that
 * the unmodified program gets through LD_PRELOAD.
 *
 * shmem_pcontrol follows the levels OpenSHMEM 1.5 recommends to profiling
 * libraries: 0 (or less) stops counting, 1 counts (the state from the
 * start), 2 counts and flushes (here: counts the flush), above 2 is the
 * tool's own (here: one int argument, added up, so the test sees the
 * variadic arguments arrive).  Each level is passed on to the library's
 * pshmem_pcontrol, which ignores it.  Single-threaded, as the test is.
 */
#include <pshmem.h>
#include <stdarg.h>
#include "prof_tool.h"

static struct prof_state state = { .level = 1 };

#define PROF_SEEN(NAME) do { \
        if (state.level > 0) \
            state.calls[PROF_##NAME]++; \
    } while (0)
#define PROF_DEF_V(NAME, PARAMS, ARGS) \
    void NAME PARAMS { PROF_SEEN(NAME); p##NAME ARGS; }
#define PROF_DEF_R(TYPE, NAME, PARAMS, ARGS) \
    TYPE NAME PARAMS { PROF_SEEN(NAME); return p##NAME ARGS; }
PROF_ROUTINES(PROF_DEF_V, PROF_DEF_R)

void shmem_pcontrol(const int level, ...)
{
    state.pcontrol++;
    if (level == 2)
        state.flushes++;
    if (level > 2) {
        va_list ap;
        va_start(ap, level);
        state.extra += va_arg(ap, int);
        va_end(ap);
    }
    state.level = level;
    pshmem_pcontrol(level);
}

const struct prof_state *hps_prof_state(void)
{
    return &state;
}
