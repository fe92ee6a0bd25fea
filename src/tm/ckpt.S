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
 * stack pointer after the return and the return address: the layout of
 * libhpsync-itm's transaction checkpoint (src/tm/itm/sjlj.S), so that its
 * begin can aim an abort at its resume stub by filling three of the words.
 */
#if defined(__x86_64__)

#define JB_RBX 0
#define JB_RBP 8
#define JB_R12 16
#define JB_R13 24
#define JB_R14 32
#define JB_R15 40
#define JB_RSP 48
#define JB_RIP 56

    .text

/* int hps_tm_ckpt_(void **jb): 0 now, 1 when an abort comes back. */
    .globl hps_tm_ckpt_
    .type hps_tm_ckpt_, @function
    .p2align 4
hps_tm_ckpt_:
    .cfi_startproc
    movq %rbx, JB_RBX(%rdi)
    movq %rbp, JB_RBP(%rdi)
    movq %r12, JB_R12(%rdi)
    movq %r13, JB_R13(%rdi)
    movq %r14, JB_R14(%rdi)
    movq %r15, JB_R15(%rdi)
    leaq 8(%rsp), %rax
    movq %rax, JB_RSP(%rdi)
    movq (%rsp), %rax
    movq %rax, JB_RIP(%rdi)
    xorl %eax, %eax
    ret
    .cfi_endproc
    .size hps_tm_ckpt_, .-hps_tm_ckpt_

/* void hps_tm_longjmp_(void *const *jb): back to the checkpoint, which
 * returns 1.  The frames below it are dead (the section is over). */
    .globl hps_tm_longjmp_
    .hidden hps_tm_longjmp_
    .type hps_tm_longjmp_, @function
    .p2align 4
hps_tm_longjmp_:
    .cfi_startproc
    movl $1, %eax
    movq JB_RBX(%rdi), %rbx
    movq JB_RBP(%rdi), %rbp
    movq JB_R12(%rdi), %r12
    movq JB_R13(%rdi), %r13
    movq JB_R14(%rdi), %r14
    movq JB_R15(%rdi), %r15
    movq JB_RSP(%rdi), %rsp
    jmp *JB_RIP(%rdi)
    .cfi_endproc
    .size hps_tm_longjmp_, .-hps_tm_longjmp_

#endif

    .section .note.GNU-stack,"",@progbits
