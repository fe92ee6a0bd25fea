/* SPDX-License-Identifier: MIT */
/*
 * sjlj.S - the checkpoint of a GCC TM transaction, x86-64 System V.
 *
 * _ITM_beginTransaction(props) is called by compiled code and may return
 * more than once (the compiler treats it as returns_twice): it saves the
 * caller's callee-saved registers, its stack pointer after the return and
 * the return address (struct hps_itm_ckpt in itm.h) and hands them to C
 * (begin.c), whose answer is the _ITM_actions value.  The outermost
 * transaction's checkpoint goes straight into the thread's hps_itm_t.ck
 * (no copy: 16 instructions less a transaction) and C is entered by a tail
 * jump; a nested one's goes into a block on this stack, which C copies
 * into a frame if the nested transaction may cancel.
 *
 * A second return comes in two ways:
 *   - hps_tm_longjmp_(ckpt, actions) (src/tm/ckpt.S: a nested cancel, and
 *     the end of the resume stub) reloads the registers and jumps to the
 *     return address, with the actions as the return value;
 *   - an abort in the TM core ends in hps_tm_longjmp_(d->fast.jb, 1)
 *     (src/tm/ckpt.S: the same 8-word layout as this checkpoint), which
 *     loads every register of jb and jumps to its return address.  begin.c
 *     puts the checkpoint in jb's rbp, hps_itm_resume_stub_ in its return
 *     address and a harmless stack pointer, so the stub finds the checkpoint in rbp, moves the
 *     stack below the caller's frame (the frames of the aborted attempt
 *     are dead), calls hps_itm_resume_ to begin again, and returns to the
 *     caller through hps_tm_longjmp_.
 * The stack below the caller's stack pointer is free: the function that
 * holds a transaction calls, so it keeps nothing in a red zone.
 */
#if defined(__x86_64__)

#include "../ckpt_layout.h"

    .text

#define DEPTH 16                     /* hps_tm_fast_t's depth (begin.c checks) */

    .globl _ITM_beginTransaction
    .type _ITM_beginTransaction, @function
    .p2align 4
_ITM_beginTransaction:
    .cfi_startproc
    /* The outermost transaction (no descriptor yet, or depth 0): the
     * checkpoint goes straight into this thread's hps_itm_t.ck (offset 0,
     * initial-exec TLS), and C takes over as if called by the program. */
    movq hps_tm_self_@gottpoff(%rip), %rax
    movq %fs:(%rax), %rax
    testq %rax, %rax
    je 1f
    cmpl $0, DEPTH(%rax)
    jne 2f
1:  movq hps_itm_t@gottpoff(%rip), %rax
    leaq 8(%rsp), %rcx
    CK_SAVE_REGS(%fs:, %rax)
    movq %rcx, %fs:CK_RSP(%rax)
    movq (%rsp), %rcx
    movq %rcx, %fs:CK_RIP(%rax)
    jmp hps_itm_begin_outer_         /* edi: props, as the caller passed it */
    /* Nested: a checkpoint of its own, on this stack.  Entry: rsp = 8 mod
     * 16 (the return address); 72 bytes keep the call below aligned and
     * hold the checkpoint. */
2:  leaq 8(%rsp), %rax
    subq $72, %rsp
    .cfi_adjust_cfa_offset 72
    CK_SAVE_REGS(, %rsp)
    movq %rax, CK_RSP(%rsp)
    movq 72(%rsp), %rax
    movq %rax, CK_RIP(%rsp)
    movq %rsp, %rsi
    call hps_itm_begin_
    addq $72, %rsp
    .cfi_adjust_cfa_offset -72
    ret
    .cfi_endproc
    .size _ITM_beginTransaction, .-_ITM_beginTransaction

    .globl hps_itm_resume_stub_
    .hidden hps_itm_resume_stub_
    .type hps_itm_resume_stub_, @function
    .p2align 4
hps_itm_resume_stub_:
    .cfi_startproc
    .cfi_undefined rip
    movq %rbp, %rbx                  /* the checkpoint, kept across the call */
    movq CK_RSP(%rbx), %rsp          /* 16-byte aligned at the caller's call */
    subq $16, %rsp
    call hps_itm_resume_
    movq %rbx, %rdi
    movl %eax, %esi
    jmp hps_tm_longjmp_
    .cfi_endproc
    .size hps_itm_resume_stub_, .-hps_itm_resume_stub_

#else
#error "libhpsync-itm: the transaction checkpoint (sjlj.S) exists for x86-64 only"
#endif

    .section .note.GNU-stack,"",@progbits
