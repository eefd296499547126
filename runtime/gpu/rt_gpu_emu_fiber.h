/*
** runtime/gpu/rt_gpu_emu_fiber.h: the emulator's coroutines (fibers): a
** block's threads, each on a stack of its own, switched at __syncthreads.
**
** Owns the switch between fibers. On x86-64 it saves and restores only the
** registers a call must preserve and the stack pointer, in user space:
** glibc's swapcontext also saves the signal mask, a system call on every
** switch, and the emulator switches several times per row a block's threads
** synchronize over (TPC-H q04 at SF 0.1: 95 % of the run in swapcontext).
** Elsewhere, under AddressSanitizer (which follows swapcontext's stack
** changes, not ours) and with control-flow protection (shadow stacks), the
** fibers are ucontext's.
*/
#ifndef RF_RT_GPU_EMU_FIBER_H
#define RF_RT_GPU_EMU_FIBER_H

#include <stddef.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RF_GPU_EMU_FIBER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define RF_GPU_EMU_FIBER_ASAN 1
#endif

#if defined(__x86_64__) && defined(__linux__) && !defined(__CET__) && !defined(RF_GPU_EMU_FIBER_ASAN)
#define RF_GPU_EMU_FIBER_OWN_SWITCH 1
#else
#include <ucontext.h>
#endif

typedef struct rf_gpu_emu_fiber {
#ifdef RF_GPU_EMU_FIBER_OWN_SWITCH
    void *sp; /* where its saved registers lie, while it does not run */
#else
    ucontext_t uc;
#endif
} rf_gpu_emu_fiber;

/* f, when first switched to, calls entry() on the stack [stack, stack +
** size); entry must never return (it switches away for good instead). */
void rf_gpu_emu_fiber_make(rf_gpu_emu_fiber *f, char *stack, size_t size, void (*entry)(void));

/* Saves the running fiber (or the thread's own stack) in from and continues
** to; returns when something switches back to from. */
void rf_gpu_emu_fiber_switch(rf_gpu_emu_fiber *from, rf_gpu_emu_fiber *to);

#endif
