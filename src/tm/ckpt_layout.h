/* SPDX-License-Identifier: MIT */
/*
 * ckpt_layout.h - the checkpoint buffer's layout (x86-64), for the two
 * assembly files that fill or load one: src/tm/ckpt.S (a section's BEGIN,
 * and the jump back that aborts end in) and src/tm/itm/sjlj.S (GCC TM's
 * _ITM_beginTransaction).  One layout, so that either can jump back to a
 * checkpoint the other took.  C sees it as hps_tm_fast_t.jb (8 words) and
 * hps_itm_ckpt_t (begin.c checks the offsets).
 */
#ifndef HPS_TM_CKPT_LAYOUT_H
#define HPS_TM_CKPT_LAYOUT_H

#define CK_RBX 0
#define CK_RBP 8
#define CK_R12 16
#define CK_R13 24
#define CK_R14 32
#define CK_R15 40
#define CK_RSP 48                    /* the caller's stack pointer after the return */
#define CK_RIP 56                    /* the return address */
#define CK_SIZE 64

/* Store the callee-saved registers at `seg off(base)` ("seg" a segment
 * override such as %fs:, or nothing). */
#define CK_SAVE_REGS(seg, base)                                                 \
    movq %rbx, seg CK_RBX(base);                                                \
    movq %rbp, seg CK_RBP(base);                                                \
    movq %r12, seg CK_R12(base);                                                \
    movq %r13, seg CK_R13(base);                                                \
    movq %r14, seg CK_R14(base);                                                \
    movq %r15, seg CK_R15(base)

#endif
