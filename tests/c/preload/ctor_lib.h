/* SPDX-License-Identifier: MIT */
/* ctor_lib.h - the library side of ctor_test (see ctor_lib.c). */
#ifndef HPS_TEST_CTOR_LIB_H
#define HPS_TEST_CTOR_LIB_H
/* Failed expectations counted by the library's constructor. */
int ctor_lib_errors(void);
/* Use the library's objects again; returns the number of failures. */
int ctor_lib_use(void);
#endif
