/* SPDX-License-Identifier: MIT
 *
 * vmp_agent_clock.c - per-thread CPU-time sampling clocks (see the header for
 * the grid that makes the weights unbiased).
 *
 * perf_event: a PERF_COUNT_SW_CPU_CLOCK event on the sampled thread (pid = its tid,
 * cpu -1), driven by a high-resolution timer rather than the scheduler tick,
 * created disabled; its overflow is delivered as SIGPROF to that very thread
 * (O_ASYNC, F_SETSIG, F_SETOWN_EX with F_OWNER_TID).  The event is armed for
 * one overflow at a time (PERF_EVENT_IOC_REFRESH 1): the kernel disables it
 * at the overflow and the handler arms it again after its stack walk, so a
 * thread always runs a full interval of its own code between two samples,
 * however long a walk takes.  The first period is the random r of the grid;
 * the handler sets the full period (PERF_EVENT_IOC_PERIOD) before the first
 * re-arm, while the event is disabled.  On Linux 6.16 and 6.17, where REFRESH
 * on a cpu-clock event can hang the system (async-profiler's issue 1578), the
 * event is simply enabled at the full period and never re-armed.
 *
 * POSIX timers: timer_create(CLOCK_THREAD_CPUTIME_ID) with SIGEV_THREAD_ID,
 * first expiry r, then every T.  The kernel checks CPU-time timers at
 * scheduler ticks, so at most one signal per tick arrives; the grid weight
 * counts the intervals in between.
 */
#include "vmp_agent_clock.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

/* The shortest first period used (the kernel's cpu-clock events take no
 * shorter period than 10 us). */
#define MIN_FIRST_NS 10000u

#ifndef sigev_notify_thread_id
#    define sigev_notify_thread_id _sigev_un._tid
#endif

static struct {
    int mechanism;
    uint64_t interval;
    int refresh;        /* re-arm with REFRESH 1 (else: enabled for good) */
    int exclude_kernel; /* the kernel wants it (perf_event_paranoid) */
    uint64_t seed;
} S;

/* The CPU-time clock of thread `tid` of this process: Linux's encoding of a
 * per-thread scheduler clock, as glibc's pthread_getcpuclockid() builds it
 * (clock id = ~tid << 3 | CPUCLOCK_PERTHREAD_MASK | CPUCLOCK_SCHED). */
static clockid_t thread_clock(uint64_t tid)
{
    return (clockid_t)((~(unsigned)tid << 3) | 6u);
}

static uint64_t cpu_ns(clockid_t clk)
{
    struct timespec ts;
    if (clock_gettime(clk, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int perf_open(uint64_t period, int exclude_kernel, pid_t tid)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.type = PERF_TYPE_SOFTWARE;
    attr.size = sizeof attr;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.sample_period = period;
    attr.disabled = 1;
    attr.wakeup_events = 1;
    attr.exclude_kernel = exclude_kernel ? 1 : 0;
    attr.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Linux 6.16 and 6.17 can hang the whole system when a cpu-clock event is
 * re-armed with PERF_EVENT_IOC_REFRESH. */
static int refresh_hangs(void)
{
    struct utsname u;
    if (uname(&u) != 0)
        return 1; /* unknown: the safe way */
    return strncmp(u.release, "6.16.", 5) == 0 || strncmp(u.release, "6.17.", 5) == 0;
}

int vmp_agent__clock_setup(int want, uint64_t interval_ns, char *why, size_t why_size)
{
    struct timespec ts;
    int fd;

    if (why != NULL && why_size > 0)
        why[0] = '\0';
    S.interval = interval_ns ? interval_ns : 1;
    S.refresh = !refresh_hangs();
    clock_gettime(CLOCK_MONOTONIC, &ts);
    S.seed = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40) ^
             0x9e3779b97f4a7c15u;
    if (want == VMP_AGENT_SAMPLER_POSIX) {
        S.mechanism = VMP_AGENT_MECH_POSIX;
        return S.mechanism;
    }
    fd = perf_open(S.interval, 0, 0);
    if (fd < 0 && (errno == EACCES || errno == EPERM)) {
        fd = perf_open(S.interval, 1, 0);
        S.exclude_kernel = fd >= 0;
    }
    if (fd >= 0) {
        close(fd);
        S.mechanism = VMP_AGENT_MECH_PERF;
        return S.mechanism;
    }
    if (why != NULL)
        snprintf(why, why_size,
                 "perf_event_open refused (%s; see /proc/sys/kernel/perf_event_paranoid)%s",
                 strerror(errno),
                 want == VMP_AGENT_SAMPLER_PERF
                     ? "; sampler=perf: no sampling"
                     : "; sampling with POSIX CPU-time timers, at most one signal per "
                       "scheduler tick (weights stay exact)");
    S.mechanism = want == VMP_AGENT_SAMPLER_PERF ? VMP_AGENT_MECH_NONE : VMP_AGENT_MECH_POSIX;
    return S.mechanism;
}

const char *vmp_agent__clock_label(int mechanism)
{
    return mechanism == VMP_AGENT_MECH_PERF    ? "perf_event cpu-clock"
           : mechanism == VMP_AGENT_MECH_POSIX ? "posix cpu timer"
                                               : "none";
}

/* A random r in [1, T]: the phase of a new thread's grid. */
static uint64_t random_phase(uint64_t tid)
{
    /* splitmix64 of a shared counter and the thread: threads started at the
     * same time get independent phases */
    uint64_t z = __atomic_add_fetch(&S.seed, 0x9e3779b97f4a7c15u, __ATOMIC_RELAXED) ^ (tid << 17);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    z ^= z >> 31;
    return 1 + z % S.interval;
}

static int start_perf(vmp_agent_clock *c, uint64_t tid, uint64_t phase)
{
    struct f_owner_ex owner;
    int fd, fl;

    fd = perf_open(S.refresh ? phase : S.interval, S.exclude_kernel, (pid_t)tid);
    if (fd < 0)
        return -1;
    owner.type = F_OWNER_TID;
    owner.pid = (pid_t)tid;
    fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETSIG, SIGPROF) != 0 || fcntl(fd, F_SETOWN_EX, &owner) != 0 ||
        fcntl(fd, F_SETFL, fl | O_ASYNC) != 0 || ioctl(fd, PERF_EVENT_IOC_RESET, 0) != 0) {
        close(fd);
        return -1;
    }
    c->first = S.refresh;
    __atomic_store_n(&c->fd, fd, __ATOMIC_RELEASE);
    if (ioctl(fd, S.refresh ? PERF_EVENT_IOC_REFRESH : PERF_EVENT_IOC_ENABLE, S.refresh ? 1 : 0) !=
        0) {
        __atomic_store_n(&c->fd, -1, __ATOMIC_RELEASE);
        close(fd);
        return -1;
    }
    return 0;
}

static int start_posix(vmp_agent_clock *c, uint64_t tid, uint64_t phase)
{
    struct itimerspec its;
    struct sigevent ev;

    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGPROF;
    ev.sigev_notify_thread_id = (pid_t)tid;
    if (timer_create(thread_clock(tid), &ev, &c->timer) != 0)
        return -1;
    its.it_interval.tv_sec = (time_t)(S.interval / 1000000000u);
    its.it_interval.tv_nsec = (long)(S.interval % 1000000000u);
    its.it_value.tv_sec = (time_t)(phase / 1000000000u);
    its.it_value.tv_nsec = (long)(phase % 1000000000u);
    if (timer_settime(c->timer, 0, &its, NULL) != 0) {
        timer_delete(c->timer);
        return -1;
    }
    c->has_timer = 1;
    return 0;
}

int vmp_agent__clock_start(vmp_agent_clock *c, uint64_t tid, int from_birth)
{
    uint64_t cpu = cpu_ns(thread_clock(tid)), phase = random_phase(tid), first;

    memset(c, 0, sizeof *c);
    c->fd = -1;
    if (!S.refresh && S.mechanism == VMP_AGENT_MECH_PERF)
        phase = S.interval; /* an enabled event's period is never changed */
    /* the grid first: a signal may arrive as soon as the clock runs */
    c->next_grid = (from_birth ? 0 : cpu) + phase;
    /* until the first grid point, or at once when a thread's birth already
     * passed it (its first sample then stands for the points passed) */
    first = c->next_grid > cpu + MIN_FIRST_NS ? c->next_grid - cpu : MIN_FIRST_NS;
    __atomic_store_n(&c->started, 1, __ATOMIC_RELEASE);
    if (S.mechanism == VMP_AGENT_MECH_PERF && start_perf(c, tid, first) == 0)
        return 0;
    if (S.mechanism != VMP_AGENT_MECH_NONE && start_posix(c, tid, first) == 0)
        return 0;
    __atomic_store_n(&c->started, 0, __ATOMIC_RELEASE);
    return -1;
}

void vmp_agent__clock_stop(vmp_agent_clock *c)
{
    int fd = __atomic_exchange_n(&c->fd, -1, __ATOMIC_ACQ_REL);
    if (fd >= 0) {
        ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
        close(fd);
    }
    if (c->has_timer) {
        timer_delete(c->timer);
        c->has_timer = 0;
    }
}

uint32_t vmp_agent__clock_weight(vmp_agent_clock *c)
{
    uint64_t now, n;
    if (c == NULL || !__atomic_load_n(&c->started, __ATOMIC_ACQUIRE))
        return 1;
    now = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
    if (now < c->next_grid)
        return 0;
    n = (now - c->next_grid) / S.interval + 1;
    c->next_grid += n * S.interval;
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

void vmp_agent__clock_rearm(vmp_agent_clock *c, const siginfo_t *si)
{
    int fd = c != NULL ? __atomic_load_n(&c->fd, __ATOMIC_ACQUIRE) : -1;
    /* only for this thread's own overflow: a REFRESH on an armed event would
     * let it overflow twice */
    if (fd < 0 || !S.refresh || si == NULL || (si->si_code != POLL_HUP && si->si_code != POLL_IN) ||
        si->si_fd != fd)
        return;
    if (c->first) {
        uint64_t period = S.interval;
        c->first = 0;
        ioctl(fd, PERF_EVENT_IOC_PERIOD, &period);
    }
    ioctl(fd, PERF_EVENT_IOC_REFRESH, 1);
}
