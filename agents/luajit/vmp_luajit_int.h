/* SPDX-License-Identifier: MIT
 *
 * vmp_luajit_int.h - what the LuaJIT agent's files share: its state and
 * their functions.  Internal: the module exports luaopen_vmp_luajit alone.
 *
 * Files:
 *   vmp_luajit.c        options, header, life cycle, GC cycles, the clock
 *   vmp_luajit_probe.c  the VM's words found at load: the VM state, the
 *                       last exit, the running coroutine; VM event handlers
 *   vmp_luajit_stack.c  the signal handler, the samples waiting for a safe
 *                       point, and the Lua stacks written with them
 *   vmp_luajit_trace.c  traces as code objects, Lua functions and their names
 */
#ifndef VMP_LUAJIT_INT_H
#define VMP_LUAJIT_INT_H

#include <errno.h>
#include <lauxlib.h>
#include <lua.h>
#include <luajit.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "vmp_agent_clock.h"
#include "vmp_agent_file.h"
#include "vmp_agent_interval.h"
#include "vmp_agent_signal.h"
#include "vmp_agent_write.h"
#include "vmp_writer.h"

#define MAX_TRACES 65536 /* LuaJIT's trace numbers are below 65535 */
#define LUA_FRAMES 128   /* Lua frames a sample keeps from one coroutine */

/* One live trace: its code object. */
typedef struct live_trace {
    uint64_t code_id; /* 0 == none */
    uint64_t start, size;
} live_trace;

typedef struct vmp_lj_state {
    vmp_writer *w;
    char file[4096];
    uint64_t interval_ns;
    volatile int32_t *vmstate; /* global_State.vmstate, or NULL */
    /* jit_State.parent: the trace of the last exit (or the parent of the
     * side trace being recorded), or NULL */
    volatile uint32_t *last_exit;
    /* LuaJIT's profiler's SIGPROF handler: schedules on_lua_stack() */
    void (*lj_signal)(int);
    /* &ProfileState.g of LuaJIT's profiler: NULL once it has stopped (the
     * first thing lua_close() does), and its handler must not run then */
    void *volatile *lj_profile_g;
    uintptr_t gs;          /* global_State */
    int need_sentinel;     /* a GC sentinel is to be made at a safe point */
    uint64_t tid;          /* the sampled thread */
    int mechanism;         /* enum vmp_agent_mechanism */
    vmp_agent_clock clock; /* its CPU-time clock */
    int clock_started;
    uint64_t zone;
    uint64_t next_code_id;
    uint64_t next_function_id;
    live_trace *traces; /* indexed by trace number */
    /* The trace being recorded (LuaJIT records one at a time): its number,
     * and its name's start as luajit -jv prints it, "(P/E) chunk:line" */
    uint32_t recording;
    char recording_start[256];
    /* the "trace" handler the agent's replaced, called after it: a
     * registry reference, or LUA_NOREF */
    int trace_next;
    atomic_int sampling;
    atomic_int in_handler;
    atomic_int closed;
    unsigned format_major;     /* format=1.2: 1; 0 == the writer's default, 2.0 */
    unsigned file_mode;        /* filemode=: the file's permission bits; 0 == 0600 */
    uint64_t flush_ns;         /* flush=: the chunk age (vmp_agent_file.h); 0 == default */
    int profiler_lost;         /* another profiler took SIGPROF or LuaJIT's profiler: said */
    vmp_agent_file_id file_id; /* the file opened, to notice it deleted or replaced */
} vmp_lj_state;

/* the agent's state (vmp_luajit.c) */
extern vmp_lj_state vmp_lj;

/* LuaJIT's own names of its VM states (LJ_VMST_*, lowercase as RaptorJIT's
 * VMProfile prints them); "trace" is compiled code. */
enum {
    ST_TRACE,
    ST_INTERP,
    ST_C,
    ST_GC,
    ST_EXIT,
    ST_RECORD,
    ST_OPT,
    ST_ASM,
    ST_UNKNOWN
};

/* The header's code kinds and event kinds (vmp_luajit.c names them). */
enum {
    KIND_TRACE
};

enum {
    EVT_FLUSH,
    EVT_GC
};

/* The running coroutine's word and the allocator wrapper
 * (vmp_luajit_probe.c). */
typedef struct vmp_lj_cur_state {
    volatile void *word; /* &global_State.cur_L, or NULL */
    int size;            /* 8 (GC64) or 4 bytes */
    uintptr_t main_L;    /* never freed while recording; 0: unknown */
    lua_Alloc alloc;     /* the allocator the wrapper calls */
    void *alloc_ud;
    int wrapped;
} vmp_lj_cur_state;

extern vmp_lj_cur_state vmp_lj_cur;

/* The coroutines the signal handler noted since the last callback, and
 * whether each was freed meanwhile (vmp_luajit_probe.c). */
#define WATCH 16

typedef struct vmp_lj_watched {
    uintptr_t co;
    volatile int freed;
} vmp_lj_watched;

extern vmp_lj_watched vmp_lj_watch[WATCH];
extern volatile uint32_t vmp_lj_n_watch;

/* The size of a GC reference, 8 (GC64) or 4 bytes (vmp_luajit_probe.c). */
extern int vmp_lj_ref_size;

/* vmp_luajit_stack.c: the SIGPROF handler (ASYNC-SIGNAL-SAFE). */
void vmp_luajit__on_sigprof(int sig, siginfo_t *si, void *uc);
/* vmp_luajit_trace.c: the handler of the JIT's "trace" events. */
int vmp_luajit__on_trace_event(lua_State *L);

void vmp_luajit__new_gc_sentinel(lua_State *L);
int vmp_luajit__start_clock(lua_State *L);
uintptr_t vmp_luajit__find_global_state(lua_State *L);
volatile int32_t *vmp_luajit__vmstate_probe(lua_State *L, uintptr_t gs);
int vmp_luajit__take_handler(lua_State *L, const char *event);
int vmp_luajit__attach(lua_State *L, lua_CFunction f, const char *event);
int vmp_luajit__is_handler(lua_State *L, lua_CFunction f, const char *event);
volatile uint32_t *vmp_luajit__last_exit_probe(lua_State *L, uintptr_t gs);
uintptr_t vmp_luajit__running_coroutine(void);
int vmp_luajit__coroutine_alive(uintptr_t co);
void vmp_luajit__cur_L_probe(lua_State *L, uintptr_t gs, int size);
void vmp_luajit__pend_flush(lua_State *L, const vmp_frame *lua, uint32_t n, const vmp_frame *main,
                            uint32_t n_main);
void vmp_luajit__on_lua_stack(void *data, lua_State *L, int samples, int vmstate);
void vmp_luajit__check_write(vmp_status st);
uint64_t vmp_luajit__function_for(lua_State *L, const char *source, int first, int last,
                                  const char *called);
void vmp_luajit__wrap_jit_attach(lua_State *L);
void vmp_luajit__keep_trace_handler(lua_State *L);

#endif
