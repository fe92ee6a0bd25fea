/* SPDX-License-Identifier: MIT */
/*
 * ckpt.S - the checkpoint an outermost section's BEGIN takes (x86-64
 * System V), and the jump back to it that an abort ends in.
 *
 * Why not __builtin_setjmp: a function that contains one has a non-local
 * label, and GCC then keeps every local that lives across any call in that
 * function in memory, not only those live across the checkpoint.  A loop
 * inside a section (an audit's sum, a tree walk's node) ran with its
 * counters and pointers loaded and stored on every iteration.  An
 * out-of-line function declared returns_twice, as setjmp is, only costs the
 * locals live across the checkpoint itself (hpsync/tm.h, HPS_TM_CKPT_).
 *
 * The buffer (hps_tm_fast_t.jb, 8 words) holds rbx, rbp, r12-r15, the
 * stack pointer after the return and the return address (ckpt_layout.h):
 * libhpsync-itm's transaction checkpoint has the same layout, so that its
 * begin can aim an abort at its resume stub by filling three of the words
 * and its cancels jump back through hps_tm_longjmp_ too.
 */
#if defined(__x86_64__)

#include "ckpt_layout.h"

    .text

/* int hps_tm_ckpt_(void **jb): 0 now, 1 when an abort comes back. */
    .globl hps_tm_ckpt_
    .type hps_tm_ckpt_, @function
    .p2align 4
hps_tm_ckpt_:
    .cfi_startproc
    CK_SAVE_REGS(, %rdi)
    leaq 8(%rsp), %rax
    movq %rax, CK_RSP(%rdi)
    movq (%rsp), %rax
    movq %rax, CK_RIP(%rdi)
    xorl %eax, %eax
    ret
    .cfi_endproc
    .size hps_tm_ckpt_, .-hps_tm_ckpt_

/* void hps_tm_longjmp_(void *const *jb, int value): back to the checkpoint,
 * which returns value (the core's aborts: 1; libhpsync-itm's: the actions
 * of _ITM_beginTransaction).  The frames below it are dead. */
    .globl hps_tm_longjmp_
    .hidden hps_tm_longjmp_
    .type hps_tm_longjmp_, @function
    .p2align 4
hps_tm_longjmp_:
    .cfi_startproc
    movl %esi, %eax
    movq CK_RBX(%rdi), %rbx
    movq CK_RBP(%rdi), %rbp
    movq CK_R12(%rdi), %r12
    movq CK_R13(%rdi), %r13
    movq CK_R14(%rdi), %r14
    movq CK_R15(%rdi), %r15
    movq CK_RSP(%rdi), %rsp
    jmp *CK_RIP(%rdi)
    .cfi_endproc
    .size hps_tm_longjmp_, .-hps_tm_longjmp_

#endif

    .section .note.GNU-stack,"",@progbits
