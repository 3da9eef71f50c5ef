/* SPDX-License-Identifier: MIT
 *
 * vmp_agent_clock.h - an agent's per-thread CPU-time sampling clock (the
 * HotSpot and LuaJIT agents):
 * a perf_event software cpu-clock event per thread whose overflow is
 * delivered as SIGPROF to that very thread, or, where the kernel refuses perf
 * events, a POSIX CPU-time timer per thread; and, in the signal handler, the
 * weight of a sample.
 *
 * Unbiased for short threads: each thread's samples fall on a grid of its own
 * CPU time, r, r + T, r + 2T, ... with T the interval and r drawn uniformly in
 * (0, T] when the thread starts.  A sample's weight is the number of grid
 * points its thread's CPU clock passed since the previous sample.  For a thread
 * that uses c of CPU, the expected number of grid points in [0, c] is c / T
 * whatever c, so weight x T has the expectation c: a thread shorter than one
 * interval is sampled with probability c / T, with weight 1.  The signals only
 * say when to look; a late or missed signal changes which stack is taken, never
 * the total weight.
 *
 * Internal to the agents (a static library each links): nothing here is
 * exported from their shared objects.
 */
#ifndef VMP_AGENT_CLOCK_H
#define VMP_AGENT_CLOCK_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/** What the user asked for (option `sampler`). */
enum vmp_agent_sampler {
    VMP_AGENT_SAMPLER_AUTO = 0, /* perf events, else POSIX timers */
    VMP_AGENT_SAMPLER_PERF = 1, /* perf events only: no sampling without them */
    VMP_AGENT_SAMPLER_POSIX = 2 /* POSIX CPU-time timers */
};

/** What runs (the header label `sampler`). */
enum vmp_agent_mechanism {
    VMP_AGENT_MECH_NONE = 0, /* nothing could be started */
    VMP_AGENT_MECH_PERF = 1, /* "perf_event cpu-clock" */
    VMP_AGENT_MECH_POSIX = 2 /* "posix cpu timer" */
};

/** One thread's clock, kept by the agent's thread table.  Started by any
 *  thread of the process; its grid is read and advanced only by the signal
 *  handler on the sampled thread. */
typedef struct vmp_agent_clock {
    int fd; /* perf event, or -1 */
    timer_t timer;
    int has_timer;
    int first;          /* perf with re-arming: the first overflow is to come */
    int started;        /* next_grid is valid */
    uint64_t next_grid; /* next grid point, in the thread's CPU ns */
} vmp_agent_clock;

/** Choose the mechanism for `want` (enum vmp_agent_sampler) at `interval_ns`,
 *  trying a perf event on the calling thread.  When perf events are refused
 *  and `want` allows POSIX timers, one line saying why goes to `why` (else
 *  ""); with `want` perf, the mechanism is NONE and `why` says why.  Call once,
 *  before the other functions.  @return an enum vmp_agent_mechanism. */
int vmp_agent__clock_setup(int want, uint64_t interval_ns, char *why, size_t why_size);

/** The label value of `mechanism` ("perf_event cpu-clock", "posix cpu timer", "none"). */
const char *vmp_agent__clock_label(int mechanism);

/** Start sampling thread `tid` of this process (kernel id; the calling
 *  thread or another one) with the chosen mechanism: SIGPROF goes to that
 *  thread.  Its grid starts at a random r in (0, T] of its CPU time counted
 *  from its birth (`from_birth`: a thread born while recording, whose CPU
 *  before this call is part of the profile) or from now.  On failure (say,
 *  out of descriptors) a perf clock falls back to a POSIX timer.  Not
 *  async-signal-safe; the caller keeps `*c` where the handler finds it
 *  before the first signal can arrive.  @return 0, or -1 with `*c` stopped. */
int vmp_agent__clock_start(vmp_agent_clock *c, uint64_t tid, int from_birth);

/** Stop and release `c` (any thread).  A signal already pending on its thread
 *  may still arrive; the caller's thread table then no longer leads the
 *  handler to `c`, or the handler weighs it by the grid as usual. */
void vmp_agent__clock_stop(vmp_agent_clock *c);

/** In the SIGPROF handler, on the thread `c` samples (NULL: none): the number
 *  of grid points its CPU clock passed since the previous call (0 when the
 *  signal came early: the agent takes no sample then; vmp_writer_sample()
 *  would count weight 0 as 1).  1 without a started clock (wall mode).
 *  Async-signal-safe. */
uint32_t vmp_agent__clock_weight(vmp_agent_clock *c);

/** In the SIGPROF handler, last, on the thread `c` samples (NULL: nothing):
 *  when `si` is the overflow of its perf event, arm it for its next overflow
 *  (after the first, at the full interval).  Nothing for other signals and
 *  for POSIX timers, which re-arm themselves.  Async-signal-safe. */
void vmp_agent__clock_rearm(vmp_agent_clock *c, const siginfo_t *si);

#endif
