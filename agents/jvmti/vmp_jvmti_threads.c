/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti_threads.c - the table of sampled threads and the /proc/self/task
 * helpers (see the header).
 */
#include "vmp_jvmti_threads.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TLS_IE __attribute__((tls_model("initial-exec")))

/* The slots: segments of SEGMENT_SLOTS, each mapped when the table first
 * reaches it and never unmapped (a handler may read any slot below the
 * bound at any time).  A segment's pointer is published before the bound
 * passes into it. */
#define SEGMENT_SLOTS 1024
static vmp_jvmti_thread *segments[VMP_JVMTI_MAX_THREADS / SEGMENT_SLOTS];
static size_t bound;     /* slots bound.. were never used (atomic) */
static long vm_key = -1; /* HotSpot's key of Thread*, or -1 (vmp_jvmti__find_vm_key) */

/* How far past its Thread* a JavaThread's JNIEnv may lie (688 bytes in
 * JDK 17). */
#define VM_ENV_REACH 16384

/* The handler's memory of its own slot, and of its thread's id. */
static __thread vmp_jvmti_thread *tls_self TLS_IE;
static __thread uint64_t tls_tid TLS_IE;

/* The slot at `i` (< bound, or == bound once its segment is mapped). */
static vmp_jvmti_thread *slot_at(size_t i)
{
    vmp_jvmti_thread *seg = __atomic_load_n(&segments[i / SEGMENT_SLOTS], __ATOMIC_ACQUIRE);
    return &seg[i % SEGMENT_SLOTS];
}

/* Map the segment that slot `i` falls in, if it is not yet.  @return 0, or
 * -1 (out of memory, or past VMP_JVMTI_MAX_THREADS). */
static int map_segment(size_t i)
{
    size_t s = i / SEGMENT_SLOTS;
    void *p;
    if (s >= sizeof segments / sizeof segments[0])
        return -1;
    if (segments[s] != NULL)
        return 0;
    p = mmap(NULL, SEGMENT_SLOTS * sizeof(vmp_jvmti_thread), PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    __atomic_store_n(&segments[s], (vmp_jvmti_thread *)p, __ATOMIC_RELEASE);
    return 0;
}

vmp_jvmti_thread *vmp_jvmti__threads_find(uint64_t tid)
{
    size_t i;

    for (i = 0; i < bound; i++) {
        if (slot_at(i)->tid == tid)
            return slot_at(i);
    }
    return NULL;
}

vmp_jvmti_thread *vmp_jvmti__threads_claim(uint64_t tid, size_t frames, size_t java_frame_size)
{
    vmp_jvmti_thread *t = NULL;
    vmp_frame *buf;
    void *java;
    size_t i;

    for (i = 0; i < bound && t == NULL; i++) {
        if (slot_at(i)->tid == 0)
            t = slot_at(i);
    }
    if (t == NULL && map_segment(bound) == 0)
        t = slot_at(bound);
    if (t == NULL || (buf = malloc(frames * sizeof *buf)) == NULL)
        return NULL;
    if ((java = malloc(frames * (java_frame_size ? java_frame_size : 1))) == NULL) {
        free(buf);
        return NULL;
    }
    if (bound < VMP_JVMTI_MAX_THREADS && t == slot_at(bound))
        __atomic_store_n(&bound, bound + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&t->status, VMP_JVMTI_SLOT_FREE, __ATOMIC_RELEASE);
    memset(&t->java, 0, sizeof *t - offsetof(vmp_jvmti_thread, java));
    t->clock.fd = -1;
    t->frames = buf;
    t->java_frames = java;
    /* a handler looking for another tid skips it; its own thread finds it
     * only once published */
    __atomic_store_n(&t->tid, tid, __ATOMIC_RELEASE);
    return t;
}

void vmp_jvmti__threads_set_status(vmp_jvmti_thread *t, int status)
{
    __atomic_store_n(&t->status, status, __ATOMIC_RELEASE);
}

void vmp_jvmti__threads_release(vmp_jvmti_thread *t)
{
    __atomic_store_n(&t->status, VMP_JVMTI_SLOT_FREE, __ATOMIC_RELEASE);
    __atomic_store_n(&t->tid, 0, __ATOMIC_RELEASE);
    free(t->frames);
    free(t->java_frames);
    t->frames = NULL;
    t->java_frames = NULL;
}

size_t vmp_jvmti__threads_bound(void)
{
    return bound;
}

vmp_jvmti_thread *vmp_jvmti__threads_at(size_t i)
{
    return slot_at(i);
}

vmp_jvmti_thread *vmp_jvmti__threads_self(void)
{
    vmp_jvmti_thread *t = tls_self;
    uint64_t tid = tls_tid;
    size_t i, n;

    /* the remembered slot, while it is still this thread's: a recording
     * that stops releases every slot, and the next one claims them anew */
    if (t != NULL && __atomic_load_n(&t->tid, __ATOMIC_ACQUIRE) == tid)
        return __atomic_load_n(&t->status, __ATOMIC_ACQUIRE) == VMP_JVMTI_SLOT_LIVE ? t : NULL;
    tls_self = NULL;
    if (tid == 0)
        tls_tid = tid = (uint64_t)syscall(SYS_gettid);
    n = __atomic_load_n(&bound, __ATOMIC_ACQUIRE);
    for (i = 0; i < n; i++) {
        vmp_jvmti_thread *s = slot_at(i);
        if (__atomic_load_n(&s->tid, __ATOMIC_ACQUIRE) == tid &&
            __atomic_load_n(&s->status, __ATOMIC_ACQUIRE) == VMP_JVMTI_SLOT_LIVE) {
            tls_self = s;
            return tls_self;
        }
    }
    return NULL;
}

void vmp_jvmti__threads_forget_self(void)
{
    tls_self = NULL;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A stack pointer and its index among the caller's. */
typedef struct sp_at {
    uint64_t sp;
    size_t i;
} sp_at;

static int by_sp(const void *a, const void *b)
{
    uint64_t x = ((const sp_at *)a)->sp, y = ((const sp_at *)b)->sp;
    return x < y ? -1 : x > y;
}

int vmp_jvmti__stack_tops(const uint64_t *sps, uint64_t *tops, size_t n)
{
    FILE *f;
    char line[512];
    sp_at *order;
    size_t k = 0, i;

    for (i = 0; i < n; i++)
        tops[i] = 0;
    if (n == 0)
        return 0;
    order = malloc(n * sizeof *order);
    f = order != NULL ? fopen("/proc/self/maps", "re") : NULL;
    if (f == NULL) {
        free(order);
        return -1;
    }
    for (i = 0; i < n; i++) {
        order[i].sp = sps[i];
        order[i].i = i;
    }
    qsort(order, n, sizeof *order, by_sp);
    /* the mappings come in ascending order, as do the sorted pointers */
    while (k < n && fgets(line, sizeof line, f) != NULL) {
        unsigned long long lo, hi;
        char perms[8];
        size_t len = strlen(line);
        if (len > 0 && line[len - 1] != '\n') { /* a long path: skip the rest */
            int ch;
            while ((ch = fgetc(f)) != EOF && ch != '\n')
                ;
        }
        if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perms) != 3)
            continue;
        while (k < n && order[k].sp < lo)
            k++;
        for (; k < n && order[k].sp < hi; k++)
            if (perms[0] == 'r' && perms[1] == 'w')
                tops[order[k].i] = hi;
    }
    fclose(f);
    free(order);
    return 0;
}

int vmp_jvmti__list_tasks(uint64_t **out, size_t *n)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *de;
    uint64_t *v = NULL;
    size_t len = 0, cap = 0;

    *out = NULL;
    *n = 0;
    if (d == NULL)
        return -1;
    while ((de = readdir(d)) != NULL) {
        char *end;
        unsigned long long tid;
        if (de->d_name[0] < '1' || de->d_name[0] > '9')
            continue;
        tid = strtoull(de->d_name, &end, 10);
        if (*end != '\0')
            continue;
        if (len == cap) {
            size_t c = cap ? cap * 2 : 64;
            uint64_t *p = realloc(v, c * sizeof *p);
            if (p == NULL) {
                free(v);
                closedir(d);
                return -1;
            }
            v = p;
            cap = c;
        }
        v[len++] = tid;
    }
    closedir(d);
    qsort(v, len, sizeof *v, cmp_u64);
    *out = v;
    *n = len;
    return 0;
}

long vmp_jvmti__tasks_index(const uint64_t *tids, size_t n, uint64_t tid)
{
    const uint64_t *at = bsearch(&tid, tids, n, sizeof *tids, cmp_u64);
    return at != NULL ? (long)(at - tids) : -1;
}

/* Read /proc/self/task/TID/FILE into buf (NUL-terminated).  @return bytes, or -1. */
static ssize_t read_task_file(uint64_t tid, const char *file, char *buf, size_t size)
{
    char path[64];
    ssize_t got;
    int fd;

    snprintf(path, sizeof path, "/proc/self/task/%llu/%s", (unsigned long long)tid, file);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    got = read(fd, buf, size - 1);
    close(fd);
    if (got < 0)
        return -1;
    buf[got] = '\0';
    return got;
}

int vmp_jvmti__task_comm(uint64_t tid, char *buf, size_t size)
{
    if (size == 0)
        return -1;
    buf[0] = '\0';
    if (read_task_file(tid, "comm", buf, size) < 0) {
        buf[0] = '\0';
        return -1;
    }
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

int vmp_jvmti__task_blocks(uint64_t tid, int sig)
{
    char buf[2048];
    const char *at;
    unsigned long long mask;

    if (read_task_file(tid, "status", buf, sizeof buf) < 0 ||
        (at = strstr(buf, "\nSigBlk:")) == NULL)
        return 0;
    mask = strtoull(at + 8, NULL, 16);
    return sig >= 1 && sig <= 64 && (mask >> (sig - 1) & 1u);
}

int vmp_jvmti__thread_role(const char *comm)
{
    static const char *const gc[] = {"GC Thread#", "G1 ",         "ZDirector", "ZDriver",
                                     "ZWorker",    "ZUncommit",   "ZStat",     "Shenandoah",
                                     "ParGC",      "Parallel GC", "GC "};
    size_t i;

    for (i = 0; i < sizeof gc / sizeof gc[0]; i++) {
        if (strncmp(comm, gc[i], strlen(gc[i])) == 0)
            return VMP_JVMTI_ROLE_GC;
    }
    if (strncmp(comm, "C1 CompilerThre", 15) == 0 || strncmp(comm, "C2 CompilerThre", 15) == 0 ||
        strncmp(comm, "JVMCI", 5) == 0)
        return VMP_JVMTI_ROLE_COMPILER;
    return VMP_JVMTI_ROLE_OTHER;
}

int vmp_jvmti__find_vm_key(const void *env)
{
    uintptr_t at = (uintptr_t)env;
    long key, found = -1;
    int fits = 0;

    /* glibc hands out keys from 0 up; PTHREAD_KEYS_MAX is its table's size */
    for (key = 0; key < PTHREAD_KEYS_MAX; key++) {
        uintptr_t v = (uintptr_t)pthread_getspecific((pthread_key_t)key);
        if (v != 0 && v < at && at - v < VM_ENV_REACH) {
            found = key;
            fits++;
        }
    }
    __atomic_store_n(&vm_key, fits == 1 ? found : -1, __ATOMIC_RELEASE);
    return fits == 1;
}

int vmp_jvmti__vm_knows_self(void)
{
    long key = __atomic_load_n(&vm_key, __ATOMIC_ACQUIRE);
    return key >= 0 && pthread_getspecific((pthread_key_t)key) != NULL;
}
