// SPDX-License-Identifier: MIT
/* Code built without -fgnu-tm: a transaction that calls it goes irrevocable. */
#include <string.h>
#include "itm_test.h"

int itm_on_hpsync(void)
{
    return strstr(_ITM_libraryVersion(), "hpsync") != NULL;
}

void itm_ext_bump(long *p)
{
    (*p)++;
}

int itm_ext_mode(void)
{
    return _ITM_inTransaction();
}

void itm_run_threads(unsigned n, void *(*fn)(void *))
{
    pthread_t t[64];
    for (uintptr_t i = 0; i < n; i++)
        HPS_CHECK_RC("pthread_create", pthread_create(&t[i], NULL, fn, (void *)i), 0);
    for (unsigned i = 0; i < n; i++)
        pthread_join(t[i], NULL);
}

long itm_ext_load(const long *p)
{
    return *p;
}
