/* SPDX-License-Identifier: MIT
 *
 * vmp_agent_signal.h - what the agents' SIGPROF handlers and their own
 * threads share: the interrupted pc, blocking the sampling signal on a
 * thread of the agent, whether another handler took SIGPROF, and waiting
 * until no handler is in flight.
 *
 * Internal to the agents (header only).
 */
#ifndef VMP_AGENT_SIGNAL_H
#define VMP_AGENT_SIGNAL_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <ucontext.h>

/** The machine pc where the signal interrupted the thread (`uc`: the
 *  handler's third argument), or 0 on an unsupported architecture.
 *  ASYNC-SIGNAL-SAFE. */
static inline uint64_t vmp_agent__pc(const void *uc)
{
    const ucontext_t *u = uc;
#if defined(__x86_64__)
    return (uint64_t)u->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uint64_t)u->uc_mcontext.pc;
#else
    (void)u;
    return 0;
#endif
}

/** The stack pointer of the interrupted thread, or 0 on an unsupported
 *  architecture.  ASYNC-SIGNAL-SAFE. */
static inline uint64_t vmp_agent__sp(const void *uc)
{
    const ucontext_t *u = uc;
#if defined(__x86_64__)
    return (uint64_t)u->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
    return (uint64_t)u->uc_mcontext.sp;
#else
    (void)u;
    return 0;
#endif
}

/** Block SIGPROF on the calling thread (an agent's own thread, which the
 *  sampling signal must never interrupt). */
static inline void vmp_agent__block_sigprof(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
}

/** Whether `ours` (an SA_SIGINFO handler) still handles SIGPROF: 0 once
 *  another handler replaced it (another profiler in the process: async-
 *  profiler, luajit -jp, the program's own), which takes the signals of
 *  the agent's clocks from then on.  ASYNC-SIGNAL-SAFE (sigaction). */
static inline int vmp_agent__sigprof_is(void (*ours)(int, siginfo_t *, void *))
{
    struct sigaction cur;
    return sigaction(SIGPROF, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
           cur.sa_sigaction == ours;
}

/** 1 when SIGPROF has a handler that is not `ours` (another profiler
 *  installed before the agent).  ASYNC-SIGNAL-SAFE. */
static inline int vmp_agent__sigprof_taken(void (*ours)(int, siginfo_t *, void *))
{
    struct sigaction cur;
    if (sigaction(SIGPROF, NULL, &cur) != 0)
        return 0;
    if (cur.sa_flags & SA_SIGINFO)
        return cur.sa_sigaction != ours;
    return cur.sa_handler != SIG_DFL && cur.sa_handler != SIG_IGN;
}

/** Wait until `*in_handler` (the handlers running now) is 0, at most about
 *  5 s: a thread stopped forever inside a handler must not hang the VM.
 *  @return 1 when none runs. */
static inline int vmp_agent__wait_handlers(atomic_int *in_handler)
{
    int waited;
    for (waited = 0; atomic_load(in_handler) != 0 && waited < 5000; waited++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return atomic_load(in_handler) == 0;
}

#endif
