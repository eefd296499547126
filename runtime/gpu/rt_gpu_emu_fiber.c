/*
** runtime/gpu/rt_gpu_emu_fiber.c: the emulator's coroutines (fibers).
**
** Owns the switch between them (rt_gpu_emu_fiber.h says when it is its own
** and when ucontext's). The own switch (x86-64 System V): push the
** callee-saved registers (rbp, rbx, r12-r15) and the SSE and x87 control
** words, store the stack pointer in the fiber left, load the one of the
** fiber entered, pop its words, return into it. A new fiber's stack holds
** such words as if it had switched away at the start of rf_gpu_emu_fiber_go,
** which calls its entry (in rbx) with the stack aligned as a call needs.
*/
#include "rt_gpu_emu_fiber.h"

#include <stdint.h>

#ifdef RF_GPU_EMU_FIBER_OWN_SWITCH

void rf_gpu_emu_fiber_swap(void **save_sp, void *to_sp);
void rf_gpu_emu_fiber_go(void);

__asm__(".pushsection .text\n"
        ".globl rf_gpu_emu_fiber_swap\n"
        ".hidden rf_gpu_emu_fiber_swap\n"
        ".type rf_gpu_emu_fiber_swap, @function\n"
        "rf_gpu_emu_fiber_swap:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    subq $8, %rsp\n"
        "    stmxcsr (%rsp)\n"
        "    fnstcw 4(%rsp)\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    ldmxcsr (%rsp)\n"
        "    fldcw 4(%rsp)\n"
        "    addq $8, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size rf_gpu_emu_fiber_swap, .-rf_gpu_emu_fiber_swap\n"
        ".globl rf_gpu_emu_fiber_go\n"
        ".hidden rf_gpu_emu_fiber_go\n"
        ".type rf_gpu_emu_fiber_go, @function\n"
        "rf_gpu_emu_fiber_go:\n"
        "    callq *%rbx\n"
        "    ud2\n"
        ".size rf_gpu_emu_fiber_go, .-rf_gpu_emu_fiber_go\n"
        ".popsection\n");

void rf_gpu_emu_fiber_make(rf_gpu_emu_fiber *f, char *stack, size_t size, void (*entry)(void))
{
    /* rf_gpu_emu_fiber_go is entered by swap's ret with the stack 16-byte
    ** aligned, so that its call gives entry the alignment of a call */
    uintptr_t top = ((uintptr_t)(stack + size) & ~(uintptr_t)15) - 16;
    uint64_t *w = (uint64_t *)(top - 8 * sizeof(uint64_t));
    uint32_t mxcsr;
    uint16_t fpcw;
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(fpcw));
    w[0] = (uint64_t)mxcsr | (uint64_t)fpcw << 32; /* the control words, as swap stores them */
    w[1] = w[2] = w[3] = w[4] = 0;                /* r15, r14, r13, r12 */
    w[5] = (uint64_t)(uintptr_t)entry;            /* rbx */
    w[6] = 0;                                     /* rbp */
    w[7] = (uint64_t)(uintptr_t)rf_gpu_emu_fiber_go;
    f->sp = w;
}

void rf_gpu_emu_fiber_switch(rf_gpu_emu_fiber *from, rf_gpu_emu_fiber *to) { rf_gpu_emu_fiber_swap(&from->sp, to->sp); }

#else

void rf_gpu_emu_fiber_make(rf_gpu_emu_fiber *f, char *stack, size_t size, void (*entry)(void))
{
    getcontext(&f->uc);
    f->uc.uc_stack.ss_sp = stack;
    f->uc.uc_stack.ss_size = size;
    f->uc.uc_link = NULL;
    makecontext(&f->uc, entry, 0);
}

void rf_gpu_emu_fiber_switch(rf_gpu_emu_fiber *from, rf_gpu_emu_fiber *to) { swapcontext(&from->uc, &to->uc); }

#endif
