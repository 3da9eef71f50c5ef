/* SPDX-License-Identifier: MIT
 *
 * vmp_luajit.c - the LuaJIT agent: a Lua C module (require "vmp_luajit")
 * that writes a vmp profile (spec.md) of the Lua state that loads it:
 * every trace as a code object of the "mcode" zone when it is created
 * (§5.6, §5.7), trace flushes and replaced traces as frees with new
 * generations (§5.10), the start function of each trace as a FUNCTION
 * record (§5.5), the modules and their symbols (§5.3), and SIGPROF samples
 * of the thread's CPU time with the machine pc and the VM state (§5.12).
 *
 * Outline.  luaopen_vmp_luajit() reads the options (VMP_LUAJIT_OPTIONS,
 * "file=out.vmp,interval=1ms"), opens the writer, finds the VM state word
 * (vmstate_probe()), attaches a handler to the JIT's trace events
 * (jit.attach, as jit.v and jit.dump do) and starts a POSIX CPU-time timer
 * on the calling thread.  The trace handler runs in the VM, outside any
 * signal handler: it asks jit.util for the trace's machine code and start
 * function.  The signal handler reads the pc from the signal context and
 * the VM state word, queues the sample (no lock, no allocation, no Lua API)
 * and calls the signal handler of LuaJIT's profiler, which makes the VM
 * call on_lua_stack() at its next safe point: that reads the Lua stack and
 * writes the queued samples with it.  The recording ends when the Lua state is closed (a
 * finalizer in the registry) or at exit() (os.exit), whichever comes first.
 *
 * The VM state: LuaJIT keeps it in global_State.vmstate (lj_obj.h): ~state
 * (interpreter, C, GC, trace exit, recorder, optimizer, assembler) or, in
 * compiled code, the number of the running trace.  No public API gives its
 * address, and its offset changes between LuaJIT versions, so the module
 * finds it: global_State is found from lua_State.glref (checked against
 * lua_getallocf(), global_State's first two fields), then the one int32
 * that reads ~LJ_VMST_C while this C function runs and ~LJ_VMST_INTERP
 * inside a count hook.  When it is not found, samples carry the state
 * "unknown" and the module says so once.  Blame (the trace of the last
 * exit) comes from jit_State.parent, found the same way from a trace-exit
 * handler (last_exit_probe()).
 */
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
#include "vmp_agent_interval.h"
#include "vmp_agent_signal.h"
#include "vmp_agent_write.h"
#include "vmp_writer.h"

/* ---- Header vocabulary (spec.md §5.1) ------------------------------------ */

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

static const char *const states[] = {"trace",  "interp", "c",   "gc",     "exit",
                                     "record", "opt",    "asm", "unknown"};
static const char *const code_kinds[] = {"trace"};

enum {
    KIND_TRACE
};

static const char *const event_kinds[] = {"flush", "gc"};

enum {
    EVT_FLUSH,
    EVT_GC
};

#define MAX_TRACES 65536 /* LuaJIT's trace numbers are below 65535 */
#define LUA_FRAMES 128   /* Lua frames a sample keeps from one coroutine */

/* One live trace: its code object. */
typedef struct live_trace {
    uint64_t code_id; /* 0 == none */
    uint64_t start, size;
} live_trace;

static struct {
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
    unsigned format_major; /* format=1.2: 1; 0 == the writer's default, 2.0 */
} g;

/* ---- Options ------------------------------------------------------------------ */

/* VMP_LUAJIT_OPTIONS: comma-separated file=PATH, interval=TIME (1us to
 * 1s) and format=1.2|2.0 (2.0: samples in SAMPLE_BLOCKs, their times in
 * us at intervals of 10 us or more).  A bad option is said on stderr and
 * its default kept. */
static void parse_options(const char *text)
{
    snprintf(g.file, sizeof g.file, "vmp-%ld.vmp", (long)getpid());
    g.interval_ns = 1000000;
    while (text != NULL && *text != '\0') {
        const char *end = strchr(text, ',');
        size_t len = end ? (size_t)(end - text) : strlen(text);
        const char *eq = memchr(text, '=', len);
        size_t klen = eq ? (size_t)(eq - text) : len;
        const char *val = eq ? eq + 1 : "";
        size_t vlen = eq ? len - klen - 1 : 0;
        uint64_t ns;
        if (klen == 4 && memcmp(text, "file", 4) == 0 && vlen > 0 && vlen < sizeof g.file) {
            memcpy(g.file, val, vlen);
            g.file[vlen] = '\0';
        } else if (klen == 8 && memcmp(text, "interval", 8) == 0 &&
                   vmp_agent__parse_interval(&ns, val, vlen) == 0 && ns >= 1000 &&
                   ns <= 1000000000) {
            g.interval_ns = ns;
        } else if (klen == 6 && memcmp(text, "format", 6) == 0 && vlen == 3 &&
                   (memcmp(val, "1.2", 3) == 0 || memcmp(val, "2.0", 3) == 0)) {
            g.format_major = memcmp(val, "2.0", 3) == 0 ? 2 : 1;
        } else if (len > 0) {
            fprintf(stderr, "vmp: option '%.*s' not understood; ignored\n", (int)len, text);
        }
        text = end ? end + 1 : NULL;
    }
}

/* ---- The VM state word ------------------------------------------------------------ */

static volatile int32_t *probe_candidates[64];
static int probe_n;
static int probe_hits;

/* In a count hook, the interpreter runs: keep the candidates that read
 * ~LJ_VMST_INTERP (-1). */
static void probe_hook(lua_State *L, lua_Debug *ar)
{
    int i, n = 0;
    (void)ar;
    for (i = 0; i < probe_n; i++) {
        if (*probe_candidates[i] == -1)
            probe_candidates[n++] = probe_candidates[i];
    }
    probe_n = n;
    probe_hits++;
    lua_sethook(L, NULL, 0, 0);
}

/* The size of the VM's GC references: 8 with GC64, else 4 (set by
 * find_global_state()). */
static int ref_size = 8;

/* The address of global_State (see the file comment), or 0. */
static uintptr_t find_global_state(lua_State *L)
{
    static const size_t glref_offsets[] = {16, 8}; /* GC64, 32-bit refs */
    void *ud = NULL;
    lua_Alloc allocf = lua_getallocf(L, &ud);
    size_t k;

    for (k = 0; k < sizeof glref_offsets / sizeof glref_offsets[0]; k++) {
        uintptr_t p;
        if (glref_offsets[k] == 8) {
            uint32_t p32;
            memcpy(&p32, (const char *)L + 8, sizeof p32);
            p = p32;
        } else {
            memcpy(&p, (const char *)L + glref_offsets[k], sizeof p);
        }
        if (p != 0 && ((lua_Alloc *)p)[0] == allocf && ((void **)p)[1] == ud) {
            ref_size = glref_offsets[k] == 16 ? 8 : 4;
            return p;
        }
    }
    return 0;
}

/* The address of global_State.vmstate, or NULL (see the file comment). */
static volatile int32_t *vmstate_probe(lua_State *L, uintptr_t gs)
{
    volatile int32_t *words;
    size_t i;
    lua_Hook hook = lua_gethook(L);
    int hook_mask = lua_gethookmask(L), hook_count = lua_gethookcount(L);

    if (gs == 0)
        return NULL;
    /* this C function runs: vmstate == ~LJ_VMST_C */
    words = (volatile int32_t *)gs;
    probe_n = 0;
    for (i = 4; i < 512 && probe_n < 64; i++) {
        if (words[i] == -2)
            probe_candidates[probe_n++] = &words[i];
    }
    probe_hits = 0;
    lua_sethook(L, probe_hook, LUA_MASKCOUNT, 1);
    if (luaL_dostring(L, "local x = 0 for i = 1, 3 do x = x + i end") != 0)
        lua_pop(L, 1);
    lua_sethook(L, hook, hook_mask, hook_count); /* the program's hook, if it had one */
    return probe_hits > 0 && probe_n == 1 ? probe_candidates[0] : NULL;
}

/* ---- LuaJIT's VM event handlers -------------------------------------------------
 * jit.attach keeps one handler per event, in the registry table _VMEVENTS at
 * an index hashed from the event's name (lib_jit.c): attaching replaces the
 * handler that another tool attached (luajit -jv, -jdump), and detaching
 * needs the very function object that was attached.  So the agent takes the
 * handler that was there, and gives it back (the probes) or calls it after
 * its own (on_trace). */

/* Push _VMEVENTS and return the index of `event` in it (jit.attach's hash);
 * 0 with nothing pushed when there is no such table (no handler yet). */
static int vmevents(lua_State *L, const char *event)
{
    const unsigned char *p;
    uint32_t h = (uint32_t)strlen(event);

    lua_getfield(L, LUA_REGISTRYINDEX, "_VMEVENTS");
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        return 0;
    }
    for (p = (const unsigned char *)event; *p; p++)
        h = h ^ (((h << 6) | (h >> 26)) + *p);
    return (int)(h << 3);
}

/* The handler of `event` now: a reference in the registry (luaL_ref), or
 * LUA_NOREF when it has none. */
static int take_handler(lua_State *L, const char *event)
{
    int i = vmevents(L, event), ref = LUA_NOREF;

    if (i == 0)
        return LUA_NOREF;
    lua_rawgeti(L, -1, i);
    if (lua_isfunction(L, -1))
        ref = luaL_ref(L, LUA_REGISTRYINDEX);
    else
        lua_pop(L, 1);
    lua_pop(L, 1);
    return ref;
}

/* Pop a function or nil and make it the handler of `event`: jit.attach(f,
 * event), which also tells the VM to look again; for nil the slot is
 * cleared (the VM notices at the next event).  @return 0, or -1. */
static int set_handler(lua_State *L, const char *event)
{
    int ok, i;

    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        if ((i = vmevents(L, event)) != 0) {
            lua_pushnil(L);
            lua_rawseti(L, -2, i);
            lua_pop(L, 1);
        }
        return 0;
    }
    lua_getfield(L, LUA_GLOBALSINDEX, "jit");
    if (!lua_istable(L, -1)) {
        lua_pop(L, 2);
        return -1;
    }
    lua_getfield(L, -1, "attach");
    lua_pushvalue(L, -3);
    lua_pushstring(L, event);
    ok = lua_pcall(L, 2, 0, 0) == 0;
    if (!ok)
        lua_pop(L, 1);
    lua_pop(L, 2);
    return ok ? 0 : -1;
}

static int attach(lua_State *L, lua_CFunction f, const char *event)
{
    lua_pushcfunction(L, f);
    return set_handler(L, event);
}

/* Give `event` back the handler that take_handler() returned `ref` for. */
static void give_back(lua_State *L, const char *event, int ref)
{
    if (ref == LUA_NOREF) {
        lua_pushnil(L);
    } else {
        lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
        luaL_unref(L, LUA_REGISTRYINDEX, ref);
    }
    set_handler(L, event);
}

/* Whether C function f is the handler of `event`. */
static int is_handler(lua_State *L, lua_CFunction f, const char *event)
{
    int i = vmevents(L, event), yes;

    if (i == 0)
        return 0;
    lua_rawgeti(L, -1, i);
    yes = lua_iscfunction(L, -1) && lua_tocfunction(L, -1) == f;
    lua_pop(L, 2);
    return yes;
}

/* The last exit: jit_State.parent, followed by jit_State.exitno, both
 * uint32 (lj_jit.h), somewhere after global_State in the same block
 * (GG_State).  A trace-exit handler receives their values; the words that
 * hold them at every exit of a small chunk's traces are the fields. */
#define EXIT_CANDIDATES 4096
static volatile uint32_t *exit_candidates[EXIT_CANDIDATES];
static int exit_n = -1; /* -1: no exit seen yet */
static int exit_events;
static uintptr_t exit_scan_start, exit_scan_end;

static int probe_texit(lua_State *L)
{
    uint32_t tr = (uint32_t)lua_tointeger(L, 1), ex = (uint32_t)lua_tointeger(L, 2);
    int i, n = 0;

    exit_events++;
    if (exit_n < 0) {
        volatile uint32_t *u = (volatile uint32_t *)exit_scan_start;
        size_t words = (exit_scan_end - exit_scan_start) / 4, k;
        for (k = 0; k + 1 < words && n < EXIT_CANDIDATES; k++) {
            if (u[k] == tr && u[k + 1] == ex)
                exit_candidates[n++] = &u[k];
        }
    } else {
        for (i = 0; i < exit_n; i++) {
            if (exit_candidates[i][0] == tr && exit_candidates[i][1] == ex)
                exit_candidates[n++] = exit_candidates[i];
        }
    }
    exit_n = n;
    return 0;
}

/* The traces the probe made, flushed after it so that the program's traces
 * get the numbers luajit -jv would give them. */
static uint32_t probe_traces[64];
static int probe_traces_n;

static int probe_trace(lua_State *L)
{
    const char *what = lua_tostring(L, 1);
    if (what != NULL && strcmp(what, "stop") == 0 && probe_traces_n < 64)
        probe_traces[probe_traces_n++] = (uint32_t)lua_tointeger(L, 2);
    return 0;
}

/* jit.flush(tr) for each trace the probe made (a side trace goes with its
 * root; flushing it alone does nothing), then a full collection, which frees
 * their numbers. */
static void probe_flush(lua_State *L)
{
    int i;
    for (i = 0; i < probe_traces_n; i++) {
        lua_getfield(L, LUA_GLOBALSINDEX, "jit");
        if (!lua_istable(L, -1)) {
            lua_pop(L, 1);
            return;
        }
        lua_getfield(L, -1, "flush");
        lua_pushinteger(L, (lua_Integer)probe_traces[i]);
        if (lua_pcall(L, 1, 0, 0) != 0)
            lua_pop(L, 1);
        lua_pop(L, 1);
    }
    if (probe_traces_n > 0) /* their numbers are free once collected */
        lua_gc(L, LUA_GCCOLLECT, 0);
    probe_traces_n = 0;
}

/* The end of the mapping that holds `addr` (/proc/self/maps), or 0. */
static uintptr_t mapping_end(uintptr_t addr)
{
    char line[512];
    FILE *f = fopen("/proc/self/maps", "r");
    uintptr_t end = 0;

    if (f == NULL)
        return 0;
    while (end == 0 && fgets(line, sizeof line, f) != NULL) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo <= addr && addr < hi)
            end = hi;
    }
    fclose(f);
    return end;
}

/* The address of jit_State.parent, or NULL: run a chunk whose traces exit
 * at several exits and keep the words that held each exit's trace and exit
 * numbers (see above). */
static volatile uint32_t *last_exit_probe(lua_State *L, uintptr_t gs)
{
    static const char chunk[] = "local x = 0\n"
                                "for i = 1, 3000 do\n"
                                "  if i % 3 == 0 then x = x + 1\n"
                                "  elseif i % 5 == 0 then x = x + 2\n"
                                "  elseif i % 7 == 0 then x = x - 3 end\n"
                                "end\n"
                                "return x\n";
    uintptr_t end = gs ? mapping_end(gs) : 0;
    int texit, trace;

    if (gs == 0 || end <= gs)
        return NULL;
    exit_scan_start = gs;
    exit_scan_end = end - gs > 65536 ? gs + 65536 : end;
    exit_n = -1;
    exit_events = 0;
    texit = take_handler(L, "texit");
    trace = take_handler(L, "trace");
    if (attach(L, probe_texit, "texit") == 0 && attach(L, probe_trace, "trace") == 0 &&
        (luaL_loadbuffer(L, chunk, sizeof chunk - 1, "=vmp_luajit probe") != 0 ||
         lua_pcall(L, 0, 0, 0) != 0))
        lua_pop(L, 1); /* the error message */
    give_back(L, "texit", texit);
    give_back(L, "trace", trace);
    probe_flush(L);
    return exit_events >= 8 && exit_n == 1 ? exit_candidates[0] : NULL;
}

/* ---- The running coroutine ------------------------------------------------------------ *
 * LuaJIT calls the profiler back at its next safe point, the first bytecode
 * the interpreter runs after the signal, which may be in another coroutine:
 * a coroutine whose work runs in traces yields (a stitched trace) and the
 * interpreter next runs in its resumer.  So the handler notes the
 * coroutine that ran, global_State.cur_L (lj_obj.h: "currently executing
 * lua_State", found like the VM state word), and the callback reads that
 * coroutine's stack.  It may have been freed in between (it finished and a
 * GC sweep ran in compiled code), so the handler watches the coroutines it
 * notes and the agent's allocator wrapper marks them when freed; a freed or
 * unwatched one gets the callback's stack as before. */

static struct {
    volatile void *word; /* &global_State.cur_L, or NULL */
    int size;            /* 8 (GC64) or 4 bytes */
    uintptr_t main_L;    /* never freed while recording; 0: unknown */
    lua_Alloc alloc;     /* the allocator the wrapper calls */
    void *alloc_ud;
    int wrapped;
} cur;

/* The GC reference of `size` bytes at `addr` (a lua_State's address). */
static uintptr_t read_ref(uintptr_t addr, int size)
{
    return size == 8 ? (uintptr_t) * (volatile uint64_t *)addr
                     : (uintptr_t) * (volatile uint32_t *)addr;
}

#define WATCH 16

static struct {
    uintptr_t co;
    volatile int freed;
} watch[WATCH];

static volatile uint32_t n_watch;

/* ASYNC-SIGNAL-SAFE: the coroutine that runs, noted in the watch list, or 0
 * (not found, or the list is full until the next callback). */
static uintptr_t running_coroutine(void)
{
    uintptr_t co;
    uint32_t i, n = n_watch;
    if (cur.word == NULL)
        return 0;
    co = read_ref((uintptr_t)cur.word, cur.size);
    if (co == 0 || co == cur.main_L)
        return co;
    for (i = 0; i < n; i++)
        if (watch[i].co == co && !watch[i].freed)
            return co;
    if (n == WATCH)
        return 0;
    watch[n].co = co;
    watch[n].freed = 0;
    atomic_signal_fence(memory_order_seq_cst);
    n_watch = n + 1;
    return co;
}

/* @return 1 if `co` can be read: the main thread, or watched and not freed. */
static int coroutine_alive(uintptr_t co)
{
    uint32_t i;
    if (co == cur.main_L)
        return 1;
    for (i = 0; i < n_watch; i++)
        if (watch[i].co == co)
            return !watch[i].freed;
    return 0;
}

/* The program's allocator, with the frees of watched coroutines noted (a
 * lua_State is freed whole, never reallocated). */
static void *vmp_luajit_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    if (nsize == 0 && ptr != NULL) {
        uint32_t i, n = n_watch;
        for (i = 0; i < n; i++)
            if (watch[i].co == (uintptr_t)ptr)
                watch[i].freed = 1;
    }
    return cur.alloc(ud, ptr, osize, nsize);
}

static uintptr_t probe_ref[64];
static int probe_ref_n;

/* Inside a coroutine: keep the candidates that hold it. */
static int probe_in_coroutine(lua_State *co)
{
    int i, n = 0;
    for (i = 0; i < probe_ref_n; i++) {
        if (read_ref(probe_ref[i], cur.size) == (uintptr_t)co)
            probe_ref[n++] = probe_ref[i];
    }
    probe_ref_n = n;
    return 0;
}

/* Find global_State.cur_L (`size` bytes a reference): the one word
 * that holds `L` now and the coroutine inside a coroutine.  Then wrap the
 * allocator.  Sets `cur`; nothing when not found. */
static void cur_L_probe(lua_State *L, uintptr_t gs, int size)
{
    lua_State *co;
    size_t i;

    if (gs == 0)
        return;
    cur.size = size;
    probe_ref_n = 0;
    for (i = 0; i + (size_t)size <= 4096 && probe_ref_n < 64; i += (size_t)size) {
        if (read_ref(gs + i, size) == (uintptr_t)L)
            probe_ref[probe_ref_n++] = gs + i;
    }
    co = lua_newthread(L);
    lua_pushcfunction(co, probe_in_coroutine);
    if (lua_resume(co, 0) != 0)
        probe_ref_n = 0;
    lua_pop(L, 1);
    if (probe_ref_n != 1)
        return;
    cur.main_L = lua_pushthread(L) ? (uintptr_t)L : 0;
    lua_pop(L, 1);
    cur.alloc = lua_getallocf(L, &cur.alloc_ud);
    lua_setallocf(L, vmp_luajit_alloc, cur.alloc_ud);
    cur.wrapped = 1;
    cur.word = (volatile void *)probe_ref[0];
}

/* ---- Samples waiting for their Lua stack ------------------------------------------------ */

/* A sample taken by the signal handler, written once LuaJIT's profiler
 * calls back at a safe point with the Lua stack (on_lua_stack()).  One
 * producer (the handler) and one consumer (the callback), on the same
 * thread: the handler fills a slot before it moves the head. */
typedef struct pending {
    uint64_t pc, generation, blame;
    uintptr_t co; /* the coroutine that ran (running_coroutine()), or 0 */
    uint32_t state, weight;
    int own; /* the pc is the innermost Lua frame's: in its trace, or the interpreter */
} pending;

#define PENDING 4096
static pending pend[PENDING];
static volatile uint32_t pend_head, pend_tail;

/* In the handler: queue `s` at the writer's current generation.
 * @return 1, or 0 when the queue is full (write it without a stack). */
static int pend_push(const vmp_sample *s, int own)
{
    uint32_t h = pend_head;
    pending *p;
    if (h - pend_tail >= PENDING)
        return 0;
    p = &pend[h % PENDING];
    p->co = running_coroutine();
    p->pc = s->pc;
    p->generation = vmp_writer_generation(g.w);
    p->blame = s->blame;
    p->state = s->state;
    p->weight = s->weight;
    p->own = own;
    atomic_signal_fence(memory_order_seq_cst);
    pend_head = h + 1;
    return 1;
}

/* Write the queued samples with `lua` (n Lua frames, innermost first):
 * in the running trace's code and in the interpreter the Lua frames alone
 * (the pc says where the innermost one ran), elsewhere (C functions and
 * the VM's helpers, GC, the JIT) the pc's frame first.  `lua` is L's
 * frames and then the main thread's (`main`, n_main of them, when L is a
 * coroutine); a sample taken in another coroutine than `L` (NULL: none)
 * has that coroutine's frames and then `main` (coroutine_frames()). */
static uint32_t coroutine_frames(
    lua_State *L, uintptr_t co, const vmp_frame *main, uint32_t n, vmp_frame *out);

static void pend_flush(
    lua_State *L, const vmp_frame *lua, uint32_t n, const vmp_frame *main, uint32_t n_main)
{
    vmp_frame frames[1 + 2 * LUA_FRAMES], co_frames[2 * LUA_FRAMES];
    uintptr_t co_read = 0;
    uint32_t n_co = 0;
    vmp_sample s;

    while (pend_tail != pend_head) {
        const pending *p = &pend[pend_tail % PENDING];
        int own = p->own;
        const vmp_frame *stack = lua;
        uint32_t depth = n;

        if (L != NULL && p->co != 0 && p->co != (uintptr_t)L) {
            if (p->co != co_read) {
                co_read = p->co;
                n_co = coroutine_frames(L, p->co, main, n_main, co_frames);
            }
            if (n_co > 0) {
                stack = co_frames;
                depth = n_co;
            }
        }
        if (depth > 0)
            memcpy(frames + 1, stack, depth * sizeof *stack);
        memset(&s, 0, sizeof s);
        s.thread = g.tid;
        s.pc = p->pc;
        s.generation = p->generation;
        s.blame = p->blame;
        s.state = p->state;
        s.weight = p->weight;
        frames[0].kind = VMP_FRAME_PC;
        frames[0].value = p->pc;
        frames[0].bcpc = VMP_BCPC_NONE;
        s.frames = own && depth > 0 ? frames + 1 : frames;
        s.depth = own && depth > 0 ? depth : depth + 1;
        vmp_writer_sample(g.w, &s);
        atomic_signal_fence(memory_order_seq_cst);
        pend_tail = pend_tail + 1;
    }
    /* the coroutines noted so far are read: watch the next ones (a sample
     * queued after this loop finds its coroutine unwatched, and gets the
     * stack of the next callback's coroutine) */
    if (L != NULL)
        n_watch = 0;
}

static uint64_t function_for(
    lua_State *L, const char *source, int first, int last, const char *called);
static void new_gc_sentinel(lua_State *L);
static uint64_t frame_function(lua_State *L, lua_State *of, lua_Debug *ar);

/* The Lua frames of coroutine `of` (innermost first, Lua functions only),
 * at most `max`, described through `L` (the running one). */
static uint32_t lua_frames(lua_State *L, lua_State *of, vmp_frame *out, uint32_t max)
{
    lua_Debug ar;
    uint32_t n = 0;
    int level;

    for (level = 0; n < max && lua_getstack(of, level, &ar); level++) {
        if (!lua_getinfo(of, "Sl", &ar) || ar.what == NULL || ar.what[0] == 'C')
            continue;
        out[n].kind = VMP_FRAME_FUNCTION;
        out[n].value = frame_function(L, of, &ar);
        out[n].bcpc = ar.currentline > 0 ? (uint32_t)ar.currentline : VMP_BCPC_NONE;
        if (out[n].value != 0)
            n++;
    }
    return n;
}

/* The stack of a sample taken in coroutine `co` while the VM calls back in
 * `L`: co's frames, then the main thread's `main` (n of them: where it
 * resumed the coroutines; none when co is the main thread), into `out`
 * (2 * LUA_FRAMES).  @return the frames, or 0 when co was freed or has no
 * Lua frame (the callback's stack then stands). */
static uint32_t coroutine_frames(
    lua_State *L, uintptr_t co, const vmp_frame *main, uint32_t n, vmp_frame *out)
{
    lua_State *of = (lua_State *)co;
    uint32_t k;

    if (!coroutine_alive(co))
        return 0;
    /* kept on L's stack while its frames are read: the descriptions may
     * allocate, and a GC step must not free it meanwhile */
    lua_pushthread(of);
    lua_xmove(of, L, 1);
    k = lua_frames(L, of, out, LUA_FRAMES);
    lua_pop(L, 1);
    if (k > 0 && co != cur.main_L && n > 0) {
        memcpy(out + k, main, n * sizeof *main);
        k += n;
    }
    return k;
}

/* The FUNCTION ids of the frames seen, by their chunk name's address (an
 * interned string) and lines: function_for() costs a formatted key and a
 * table lookup, this a few loads.  A miss or a collision asks
 * function_for(). */
#define FN_CACHE 4096

static struct {
    const char *source;
    int first, last;
    uint64_t id;
} fn_cache[FN_CACHE];

/* The FUNCTION id of frame `ar` of coroutine `of` (lua_getinfo "Sl" done):
 * its name ("n", the calling code's, which decodes the caller's bytecode)
 * is asked for only when the function is new here. */
static uint64_t frame_function(lua_State *L, lua_State *of, lua_Debug *ar)
{
    uintptr_t h = ((uintptr_t)ar->source >> 4) ^ (uintptr_t)ar->linedefined * 2654435761u;
    size_t i = (size_t)(h ^ (h >> 13)) % FN_CACHE;
    if (fn_cache[i].source == ar->source && fn_cache[i].first == ar->linedefined &&
        fn_cache[i].last == ar->lastlinedefined && fn_cache[i].id != 0)
        return fn_cache[i].id;
    ar->name = NULL;
    if (!lua_getinfo(of, "n", ar))
        ar->name = NULL;
    fn_cache[i].id = function_for(L, ar->source, ar->linedefined, ar->lastlinedefined, ar->name);
    fn_cache[i].source = ar->source;
    fn_cache[i].first = ar->linedefined;
    fn_cache[i].last = ar->lastlinedefined;
    return fn_cache[i].id;
}

/* LuaJIT's profiler callback, at a safe point of the VM on the profiled
 * thread: the Lua stack (lua_getstack, innermost first, Lua functions
 * only) for the samples queued since the last call. */
static void keep_trace_handler(lua_State *L);

static void on_lua_stack(void *data, lua_State *L, int samples, int vmstate)
{
    vmp_frame lua[2 * LUA_FRAMES], main[LUA_FRAMES];
    uint32_t n, n_main = 0;

    (void)data;
    (void)samples;
    (void)vmstate;
    if (g.w == NULL || atomic_load(&g.closed))
        return;
    n = lua_frames(L, L, lua, LUA_FRAMES);
    /* in a coroutine: the main thread's frames below, where it resumed the
     * coroutines (the intermediate coroutines of a nested resume are not
     * known: LuaJIT keeps no link to a resumer) */
    if (cur.main_L != 0 && (uintptr_t)L != cur.main_L) {
        n_main = lua_frames(L, (lua_State *)cur.main_L, main, LUA_FRAMES);
        memcpy(lua + n, main, n_main * sizeof *main);
    }
    pend_flush(L, lua, n + n_main, main, n_main);
    keep_trace_handler(L);
    if (g.need_sentinel) {
        g.need_sentinel = 0;
        new_gc_sentinel(L);
    }
}

/* ---- The signal handler ------------------------------------------------------------- */

/* ASYNC-SIGNAL-SAFE: reads the pc and the state word, writes one sample. */
static void on_sigprof(int sig, siginfo_t *si, void *uc)
{
    int saved_errno = errno;
    vmp_sample s;
    vmp_frame f;
    int32_t st;
    int lj;

    (void)sig;
    atomic_fetch_add(&g.in_handler, 1);
    if (atomic_load(&g.sampling) && g.w != NULL) {
        memset(&s, 0, sizeof s);
        s.thread = g.tid;
        s.pc = vmp_agent__pc(uc);
        s.generation = VMP_GENERATION_CURRENT;
        /* the intervals of the thread's CPU time since its previous sample
         * (vmp_agent_clock.h); 0: the signal came early, no sample */
        s.weight = vmp_agent__clock_weight(&g.clock);
        st = g.vmstate != NULL ? *g.vmstate : INT32_MIN;
        /* blame: the running trace (compiled code calls C helpers of the
         * VM: allocation, GC steps), else the trace of the last exit */
        if (st > 0 && st < MAX_TRACES)
            s.blame = g.traces[st].code_id;
        else if (st <= 0 && g.last_exit != NULL && *g.last_exit < MAX_TRACES)
            s.blame = g.traces[*g.last_exit].code_id;
        if (st > 0)
            s.state = ST_TRACE;
        else if (st < 0 && st >= -7)
            s.state = (uint32_t)(ST_INTERP + (~st));
        else
            s.state = ST_UNKNOWN;
        f.kind = VMP_FRAME_PC;
        f.value = s.pc;
        f.bcpc = VMP_BCPC_NONE;
        s.frames = &f;
        s.depth = 1;
        lj = g.lj_signal != NULL && *g.lj_profile_g != NULL;
        if (s.weight > 0 &&
            (!lj || !pend_push(&s, s.state == ST_INTERP ||
                                       (st > 0 && st < MAX_TRACES &&
                                        s.pc - g.traces[st].start < g.traces[st].size))))
            vmp_writer_sample(g.w, &s);
        if (lj) /* LuaJIT's profiler, still running: call on_lua_stack() soon */
            g.lj_signal(SIGPROF);
    }
    /* always (a no-op for other signals): the clock's first signal can come
     * before start_clock() has returned, and an overflow not re-armed stops
     * the clock for good (it did, in about one run in 60 at 100 us) */
    vmp_agent__clock_rearm(&g.clock, si);
    atomic_fetch_sub(&g.in_handler, 1);
    errno = saved_errno;
}

/* ---- Traces (the JIT's "trace" events) ------------------------------------------------ */

static void check_write(vmp_status st)
{
    static int warned;
    vmp_agent__check_write(st, g.file, &warned);
}

/* Push jit.util's function `name` (require "jit.util").  @return 1, or 0
 * with nothing pushed. */
static int push_jit_util(lua_State *L, const char *name)
{
    lua_getfield(L, LUA_GLOBALSINDEX, "require");
    lua_pushstring(L, "jit.util");
    if (lua_pcall(L, 1, 1, 0) != 0 || !lua_istable(L, -1)) {
        lua_pop(L, 1);
        return 0;
    }
    lua_getfield(L, -1, name);
    lua_remove(L, -2);
    if (!lua_isfunction(L, -1)) {
        lua_pop(L, 1);
        return 0;
    }
    return 1;
}

/* Free trace `tr`'s code object, if it has one (a new generation). */
static void free_trace(uint32_t tr)
{
    if (tr < MAX_TRACES && g.traces[tr].code_id != 0) {
        check_write(vmp_writer_code_free(g.w, g.traces[tr].code_id, NULL));
        g.traces[tr].code_id = 0;
    }
}

/* The FUNCTION id of the Lua function defined at lines `first`..`last`
 * of chunk `source`, writing its record the first time (keyed by source and
 * first line, in a registry table).  A frame's position is its current
 * source line (the debug API gives lines, not bytecode positions): the
 * record's line table maps each line of the function to itself.  0 when
 * out of memory. */
/* The chunk name `source` (a prototype's, '@' or '=' first when it names a
 * file or is a given name) as LuaJIT's profiler shows it without its `p`
 * option: a file's base name ("hot.lua"), a given name as it is, and a
 * chunk loaded from a string as [string "its first line"], cut. */
static void short_chunk(const char *source, char *buf, size_t size)
{
    if (source[0] == '@') {
        const char *slash = strrchr(source + 1, '/');
        snprintf(buf, size, "%s", slash != NULL ? slash + 1 : source + 1);
    } else if (source[0] == '=') {
        snprintf(buf, size, "%s", source + 1);
    } else {
        size_t n = strcspn(source, "\r\n");
        snprintf(buf, size, "[string \"%.*s%s\"]", (int)(n > 40 ? 40 : n), source,
                 n > 40 || source[n] != '\0' ? "..." : "");
    }
}

/* The FUNCTION id of the prototype of chunk `source` defined on lines
 * [first, last], made and written on first sight.  Its name is the one its
 * caller knows it by (`called`, lua_getinfo's "n": "loop", "bar" for
 * Foo.bar, "method" for obj:method, as luajit -jp=f shows them), then the
 * short chunk name and the line it is defined on: "loop (hot.lua:5)"; one
 * seen without a name (a coroutine's body, a function called through
 * pcall, the main chunk) is "hot.lua:5", as -jp=f names it.  One name per
 * prototype: the first seen.  The FUNCTION's file is the full chunk name. */
static uint64_t function_for(
    lua_State *L, const char *source, int first, int last, const char *called)
{
    static const char key = 0; /* the registry table's key: its address */
    char name[600], chunk[256], where[512];
    uint64_t id = 0;
    vmp_function fn;
    uint32_t *lines = NULL;
    int top = lua_gettop(L), n = 0, line;

    short_chunk(source, chunk, sizeof chunk);
    if (called != NULL && called[0] != '\0')
        snprintf(name, sizeof name, "%s (%s:%d)", called, chunk, first);
    else
        snprintf(name, sizeof name, "%s:%d", chunk, first);
    if (source[0] == '@' || source[0] == '=')
        source++;
    /* the registry key: the full chunk name and line */
    snprintf(where, sizeof where, "%s:%d", source, first);
    lua_pushlightuserdata(L, (void *)&key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushlightuserdata(L, (void *)&key);
        lua_pushvalue(L, -2);
        lua_rawset(L, LUA_REGISTRYINDEX);
    }
    lua_getfield(L, -1, where);
    if (lua_isnumber(L, -1)) {
        id = (uint64_t)lua_tonumber(L, -1);
        lua_settop(L, top);
        return id;
    }
    lua_pop(L, 1);
    id = ++g.next_function_id;
    lua_pushnumber(L, (lua_Number)id);
    lua_setfield(L, -2, where);
    lua_settop(L, top);
    if (first < 1) /* the main chunk: its lines from 1 */
        first = 1;
    if (last >= first && last - first < 100000)
        lines = malloc(2 * (size_t)(last - first + 1) * sizeof *lines);
    for (line = first; lines != NULL && line <= last; line++, n++)
        lines[2 * n] = lines[2 * n + 1] = (uint32_t)line;
    memset(&fn, 0, sizeof fn);
    fn.id = id;
    fn.name = name;
    fn.file = source;
    fn.first_line = (uint32_t)first;
    fn.lines = lines;
    fn.n_lines = (size_t)n;
    check_write(vmp_writer_function(g.w, &fn));
    free(lines);
    return id;
}

/* The name the caller of the Lua function at stack index `fi` knows it by,
 * when it runs on L's stack now (a trace's start function, as the JIT
 * reports the trace), into buf; "" if not found. */
static void name_on_stack(lua_State *L, int fi, char *buf, size_t size)
{
    lua_Debug ar;
    int level;

    buf[0] = '\0';
    for (level = 0; level < 64 && lua_getstack(L, level, &ar); level++) {
        int same;
        if (!lua_getinfo(L, "fn", &ar))
            continue;
        same = lua_rawequal(L, -1, fi);
        lua_pop(L, 1);
        if (same) {
            if (ar.name != NULL)
                snprintf(buf, size, "%s", ar.name);
            return;
        }
    }
}

/* The FUNCTION id of the Lua function at stack index `fi` (its prototype
 * from jit.util.funcinfo), or 0. */
static uint64_t function_id(lua_State *L, int fi)
{
    uint64_t id = 0;
    int top = lua_gettop(L);
    char called[128];

    if (fi < 0)
        fi = top + fi + 1;
    name_on_stack(L, fi, called, sizeof called);
    if (push_jit_util(L, "funcinfo")) {
        lua_pushvalue(L, fi);
        if (lua_pcall(L, 1, 1, 0) == 0 && lua_istable(L, -1)) {
            lua_getfield(L, -1, "source");
            lua_getfield(L, -2, "linedefined");
            lua_getfield(L, -3, "lastlinedefined");
            if (lua_isstring(L, -3))
                id = function_for(L, lua_tostring(L, -3), (int)lua_tointeger(L, -2),
                                  (int)lua_tointeger(L, -1), called);
        }
    }
    lua_settop(L, top);
    return id;
}

/* The location of bytecode `pc` of the function at stack index `fi` as
 * luajit -jv names it, into buf: "chunk:line" (jit.util.funcinfo's loc), a
 * fast function's name ("os.clock"), else "?". */
static void location(lua_State *L, int fi, lua_Integer pc, char *buf, size_t size)
{
    int top = lua_gettop(L);

    snprintf(buf, size, "?");
    if (push_jit_util(L, "funcinfo")) {
        lua_pushvalue(L, fi);
        lua_pushinteger(L, pc);
        if (lua_pcall(L, 2, 1, 0) == 0 && lua_istable(L, -1)) {
            lua_getfield(L, -1, "loc");
            lua_getfield(L, -2, "ffid");
            if (lua_isstring(L, -2)) {
                snprintf(buf, size, "%s", lua_tostring(L, -2));
            } else if (lua_isnumber(L, -1)) { /* a fast function: its name */
                lua_getfield(L, LUA_GLOBALSINDEX, "require");
                lua_pushstring(L, "jit.vmdef");
                if (lua_pcall(L, 1, 1, 0) == 0 && lua_istable(L, -1)) {
                    lua_getfield(L, -1, "ffnames");
                    if (lua_istable(L, -1)) {
                        lua_rawgeti(L, -1, (int)lua_tointeger(L, -3));
                        if (lua_isstring(L, -1))
                            snprintf(buf, size, "%s", lua_tostring(L, -1));
                    }
                }
            }
        }
    }
    lua_settop(L, top);
}

/* The end of trace `tr`'s name, how it links, as luajit -jv prints it:
 * "loop", "-> 3", "-> return", "-> 0 interpreter", "stitch", ... */
static void link_of(lua_State *L, uint32_t tr, char *buf, size_t size)
{
    int top = lua_gettop(L);

    buf[0] = 0;
    if (push_jit_util(L, "traceinfo")) {
        lua_pushinteger(L, (lua_Integer)tr);
        if (lua_pcall(L, 1, 1, 0) == 0 && lua_istable(L, -1)) {
            lua_Integer link;
            const char *type;
            lua_getfield(L, -1, "link");
            lua_getfield(L, -2, "linktype");
            link = lua_tointeger(L, -2);
            type = lua_isstring(L, -1) ? lua_tostring(L, -1) : "?";
            if (strcmp(type, "interpreter") == 0 || strcmp(type, "stitch") == 0 ||
                link == (lua_Integer)tr || link == 0)
                snprintf(buf, size, "%s", type);
            else if (strcmp(type, "root") == 0)
                snprintf(buf, size, "-> %ld", (long)link);
            else
                snprintf(buf, size, "-> %ld %s", (long)link, type);
        }
    }
    lua_settop(L, top);
}

/* A trace stopped recording and has machine code: its code object, named as
 * luajit -jv names it: "TRACE 3 hot.lua:10 loop", "TRACE 6 (4/3) hot.lua:22
 * -> 4", "TRACE 9 (6/3) hot.lua:33 stitch os.clock" (number, parent trace
 * and exit of a side trace, start location, link). */
static void add_trace(lua_State *L, uint32_t tr, int fi)
{
    char name[512], link[64];
    uint64_t start, size;
    vmp_code_object co;
    uint32_t i;
    int top = lua_gettop(L);

    if (!push_jit_util(L, "tracemc"))
        return;
    lua_pushinteger(L, (lua_Integer)tr);
    if (lua_pcall(L, 1, 2, 0) != 0 || !lua_isstring(L, -2) || !lua_isnumber(L, -1)) {
        lua_settop(L, top);
        return;
    }
    size = (uint64_t)lua_objlen(L, -2);
    start = (uint64_t)lua_tonumber(L, -1);
    lua_settop(L, top);
    if (size == 0)
        return;
    free_trace(tr);                    /* a trace number given again */
    for (i = 1; i < MAX_TRACES; i++) { /* code the writer still has there */
        const live_trace *t = &g.traces[i];
        if (t->code_id != 0 && t->start < start + size && start < t->start + t->size)
            free_trace(i);
    }
    link_of(L, tr, link, sizeof link);
    if (strcmp(link, "stitch") == 0) { /* and the function it stitches to */
        size_t n = strlen(link);
        link[n++] = ' ';
        location(L, fi, 0, link + n, sizeof link - n);
    }
    snprintf(name, sizeof name, "TRACE %u %s %s", tr, g.recording == tr ? g.recording_start : "?",
             link);
    memset(&co, 0, sizeof co);
    co.id = ++g.next_code_id;
    co.zone = g.zone;
    co.kind = KIND_TRACE;
    co.name = name;
    co.function = function_id(L, fi);
    co.start = start;
    co.size = size;
    check_write(vmp_writer_code_add(g.w, &co));
    g.traces[tr].code_id = co.id;
    g.traces[tr].start = start;
    g.traces[tr].size = size;
}

/* jit.attach handler: (what, tr, func, pc, parent, exit) for "start",
 * (what, tr, func) for "stop", (what) for "flush". */
static int on_trace(lua_State *L)
{
    const char *what = lua_tostring(L, 1);
    uint32_t tr = (uint32_t)lua_tointeger(L, 2), i;

    if (what == NULL || g.w == NULL || atomic_load(&g.closed))
        return 0;
    if (strcmp(what, "start") == 0) {
        char loc[200], from[40] = "";
        if (lua_tointeger(L, 5) != 0) { /* a side trace: (parent/exit) */
            lua_Integer ex = lua_tointeger(L, 6);
            if (ex == -1)
                snprintf(from, sizeof from, "(%ld/stitch) ", (long)lua_tointeger(L, 5));
            else
                snprintf(from, sizeof from, "(%ld/%ld) ", (long)lua_tointeger(L, 5), (long)ex);
        }
        location(L, 3, lua_tointeger(L, 4), loc, sizeof loc);
        g.recording = tr;
        snprintf(g.recording_start, sizeof g.recording_start, "%s%s", from, loc);
    } else if (strcmp(what, "stop") == 0 && tr > 0 && tr < MAX_TRACES) {
        add_trace(L, tr, 3);
    } else if (strcmp(what, "flush") == 0) {
        for (i = 1; i < MAX_TRACES; i++)
            free_trace(i);
        check_write(vmp_writer_event(g.w, EVT_FLUSH, 0, 0, 0, 0, NULL));
    }
    return 0;
}

/* jit.attach handler of "trace": the agent's, then the one it replaced
 * (luajit -jv's, say) with the same arguments. */
static int on_trace_event(lua_State *L)
{
    int n = lua_gettop(L), i;

    on_trace(L);
    lua_settop(L, n);
    if (g.trace_next != LUA_NOREF) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, g.trace_next);
        for (i = 1; i <= n; i++)
            lua_pushvalue(L, i);
        if (lua_pcall(L, n, 0, 0) != 0)
            lua_pop(L, 1);
    }
    return 0;
}

/* jit.attach as the agent installs it while it records: a "trace" handler
 * that a tool attaches (luajit -jv, -jdump) becomes the one the agent's
 * calls, in its place as jit.attach would have put it in the agent's;
 * detaching it (jit.attach(f)) removes it.  Everything else goes to
 * LuaJIT's jit.attach. */
static int attach_wrapper(lua_State *L)
{
    const char *event = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : NULL;

    luaL_checktype(L, 1, LUA_TFUNCTION);
    if (event != NULL && strcmp(event, "trace") == 0 &&
        !(lua_iscfunction(L, 1) && lua_tocfunction(L, 1) == on_trace_event)) {
        if (g.trace_next != LUA_NOREF)
            luaL_unref(L, LUA_REGISTRYINDEX, g.trace_next);
        lua_pushvalue(L, 1);
        g.trace_next = luaL_ref(L, LUA_REGISTRYINDEX);
        return 0;
    }
    if (event == NULL && g.trace_next != LUA_NOREF) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, g.trace_next);
        if (lua_rawequal(L, -1, 1)) {
            luaL_unref(L, LUA_REGISTRYINDEX, g.trace_next);
            g.trace_next = LUA_NOREF;
        }
        lua_pop(L, 1);
    }
    lua_pushvalue(L, lua_upvalueindex(1)); /* LuaJIT's jit.attach */
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 0);
    return 0;
}

/* Put attach_wrapper() in the place of jit.attach. */
static void wrap_jit_attach(lua_State *L)
{
    lua_getfield(L, LUA_GLOBALSINDEX, "jit");
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, "attach");
        if (lua_isfunction(L, -1)) {
            lua_pushcclosure(L, attach_wrapper, 1);
            lua_setfield(L, -2, "attach");
        } else {
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
}

/* At a safe point: when a tool attached its own "trace" handler past the
 * wrapper (with a jit.attach it had kept from before the agent loaded), the
 * agent's comes back first and calls that one after it. */
static void keep_trace_handler(lua_State *L)
{
    if (is_handler(L, on_trace_event, "trace"))
        return;
    if (g.trace_next != LUA_NOREF)
        luaL_unref(L, LUA_REGISTRYINDEX, g.trace_next);
    g.trace_next = take_handler(L, "trace");
    attach(L, on_trace_event, "trace");
}

/* ---- Life cycle -------------------------------------------------------------------- */

static void stop_recording(void)
{
    vmp_writer_totals tot;

    if (atomic_exchange(&g.closed, 1))
        return;
    atomic_store(&g.sampling, 0);
    if (g.clock_started)
        vmp_agent__clock_stop(&g.clock);
    if (!vmp_agent__wait_handlers(&g.in_handler) || g.w == NULL)
        return;
    pend_flush(NULL, NULL, 0, NULL, 0); /* those the profiler did not call back for */
    memset(&tot, 0, sizeof tot);
    if (vmp_writer_close(g.w, &tot) < 0)
        fprintf(stderr, "vmp: error writing %s: %s\n", g.file,
                tot.write_errno ? strerror(tot.write_errno) : "write failed");
    else
        fprintf(stderr, "vmp: wrote %llu samples (%llu dropped) to %s\n",
                (unsigned long long)tot.samples_written,
                (unsigned long long)(tot.dropped_full + tot.dropped_write), g.file);
    g.w = NULL;
}

/* ---- GC cycles --------------------------------------------------------------------- */

static void new_gc_sentinel(lua_State *L);

/* The finalizer of an unreachable userdata runs when a GC cycle ends: an
 * event "gc" at that time, and a new sentinel for the next cycle. */
static int on_gc_cycle(lua_State *L)
{
    if (g.w == NULL || atomic_load(&g.closed))
        return 0;
    {
        lua_Debug ar;

        check_write(vmp_writer_event(g.w, EVT_GC, 0, 0, g.tid, 0, NULL));
        /* the next sentinel, unless no Lua function runs below this finalizer:
         * lua_close() runs every finalizer with an empty stack, and must not
         * get new objects then; on_lua_stack() makes it in that case */
        if (lua_getstack(L, 1, &ar))
            new_gc_sentinel(L);
        else
            g.need_sentinel = 1;
    }
    return 0;
}

/* A userdata that nothing refers to, with on_gc_cycle() as its finalizer. */
static void new_gc_sentinel(lua_State *L)
{
    lua_newuserdata(L, 1);
    lua_newtable(L);
    lua_pushcfunction(L, on_gc_cycle);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    lua_pop(L, 1);
}

static int on_close(lua_State *L)
{
    stop_recording();
    /* the program's own allocator back: lua_close() frees everything after
     * the finalizers, when this module may be unloaded already */
    if (cur.wrapped) {
        lua_setallocf(L, cur.alloc, cur.alloc_ud);
        cur.wrapped = 0;
    }
    return 0;
}

static void at_exit(void)
{
    stop_recording();
}

/* &ProfileState.g of LuaJIT's profiler (lj_profile.c: a static struct whose
 * first members are g, cb, data), found after luaJIT_profile_start() by
 * their values (this VM's global_State, on_lua_stack, NULL) in the writable
 * mappings of the object that holds luaJIT_profile_start (its data, and its
 * bss right after).  luaJIT_profile_stop() clears it before it puts the
 * previous SIGPROF handler back; the signal handler runs on the same thread,
 * so reading it there is exact.  NULL when not found. */
static void *volatile *find_profile_g(void)
{
    uintptr_t fn = (uintptr_t)&luaJIT_profile_start, prev_end = 0;
    char line[600], obj[512] = "";
    void *volatile *found = NULL;
    int prev_mine = 0;
    FILE *f = fopen("/proc/self/maps", "r");

    if (f == NULL)
        return NULL;
    while (fgets(line, sizeof line, f) != NULL) { /* the object's path */
        unsigned long lo, hi;
        char path[512] = "";
        if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %511s", &lo, &hi, path) == 3 && lo <= fn &&
            fn < hi) {
            snprintf(obj, sizeof obj, "%s", path);
            break;
        }
    }
    rewind(f);
    while (found == NULL && obj[0] != '\0' && fgets(line, sizeof line, f) != NULL) {
        unsigned long lo, hi;
        char perms[8] = "", path[512] = "";
        int n = sscanf(line, "%lx-%lx %7s %*s %*s %*s %511s", &lo, &hi, perms, path);
        int mine = n == 4 && strcmp(path, obj) == 0;
        int bss = n == 3 && prev_mine && lo == prev_end;
        if (n >= 3 && perms[0] == 'r' && perms[1] == 'w' && (mine || bss)) {
            const uintptr_t *w = (const uintptr_t *)lo;
            size_t k, nw = (hi - lo) / sizeof *w;
            for (k = 0; k + 2 < nw; k++) {
                if (w[k] == g.gs && w[k + 1] == (uintptr_t)on_lua_stack && w[k + 2] == 0) {
                    found = (void *volatile *)&w[k];
                    break;
                }
            }
        }
        prev_mine = mine;
        prev_end = hi;
    }
    fclose(f);
    return found;
}

/* Install the handler and start the thread's CPU-time clock. */
static int start_clock(lua_State *L)
{
    struct sigaction sa;

    if (g.mechanism == VMP_AGENT_MECH_NONE)
        return -1;
    g.clock.fd = -1; /* no perf event yet: the handler re-arms none */
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigprof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGPROF, &sa, NULL) != 0)
        return -1;
    if (L != NULL) {
        /* LuaJIT's profiler, for the Lua stacks: it installs its own SIGPROF
         * handler (and puts ours back when it stops); its own timer, at
         * 1000 s, stays silent.  Ours calls its handler after each sample. */
        struct sigaction lj;
        luaJIT_profile_start(L, "fi1000000", on_lua_stack, NULL);
        g.lj_profile_g = g.gs != 0 ? find_profile_g() : NULL;
        if (g.lj_profile_g != NULL && sigaction(SIGPROF, NULL, &lj) == 0 &&
            !(lj.sa_flags & SA_SIGINFO) && lj.sa_handler != SIG_DFL && lj.sa_handler != SIG_IGN)
            g.lj_signal = lj.sa_handler;
        if (g.lj_signal == NULL) {
            luaJIT_profile_stop(L);
            fprintf(stderr, "vmp: LuaJIT's profiler state not found; samples have no Lua stack\n");
        }
        if (sigaction(SIGPROF, &sa, NULL) != 0)
            return -1;
    }
    if (vmp_agent__clock_start(&g.clock, g.tid, 0) != 0)
        return -1;
    g.clock_started = 1;
    return 0;
}

static void open_writer(void)
{
    char interval[32];
    const char *labels[10];
    vmp_writer_meta meta;
    vmp_writer_options wo = VMP_WRITER_OPTIONS_INIT;
    vmp_status st;

    vmp_agent__format_interval(interval, sizeof interval, g.interval_ns);
    labels[0] = "interval";
    labels[1] = interval;
    labels[2] = "vmstate";
    labels[3] = g.vmstate != NULL ? "found" : "not found";
    labels[4] = "blame";
    labels[5] = g.last_exit != NULL ? "last exit" : "none";
    labels[6] = "sampler"; /* the clock that runs (vmp_agent_clock.h) */
    labels[7] = vmp_agent__clock_label(g.mechanism);
    labels[8] = "coroutine"; /* whose stack a sample has */
    labels[9] = cur.word != NULL ? "running" : "next safe point";
    memset(&meta, 0, sizeof meta);
    meta.vm_name = "LuaJIT";
    meta.vm_version =
        strncmp(LUAJIT_VERSION, "LuaJIT ", 7) == 0 ? &LUAJIT_VERSION[7] : LUAJIT_VERSION;
    meta.sample_interval_ns = g.interval_ns;
    meta.states = states;
    meta.n_states = sizeof states / sizeof states[0];
    meta.code_kinds = code_kinds;
    meta.n_code_kinds = sizeof code_kinds / sizeof code_kinds[0];
    meta.event_kinds = event_kinds;
    meta.n_event_kinds = sizeof event_kinds / sizeof event_kinds[0];
    meta.labels = labels;
    meta.n_labels = 5;
    wo.lazy_functions = 1;
    wo.lazy_symbols = 1;
    wo.format_major = g.format_major; /* times in us from a 10us interval on */
    st = vmp_writer_open(&g.w, g.file, &meta, &wo);
    if (st < 0) {
        g.w = NULL;
        fprintf(stderr, "vmp: cannot open %s: %s; the program continues without profiling\n",
                g.file, vmp_status_str(st));
        return;
    }
    /* LuaJIT allocates its machine code areas near the binary: one zone
     * spans the address space, traces give the real extents */
    check_write(vmp_writer_code_zone(g.w, &g.zone, "mcode", 0, UINT64_MAX));
    check_write(vmp_writer_add_loaded_modules(g.w));
    /* the sampled thread, by its kernel name */
    {
        char path[64], comm[32] = "";
        FILE *f;
        snprintf(path, sizeof path, "/proc/self/task/%llu/comm", (unsigned long long)g.tid);
        f = fopen(path, "r");
        if (f != NULL) {
            if (fgets(comm, sizeof comm, f) != NULL)
                comm[strcspn(comm, "\n")] = '\0';
            fclose(f);
        }
        check_write(vmp_writer_thread(g.w, g.tid, comm[0] ? comm : "lua", 0));
    }
}

/* require "vmp_luajit": start recording this Lua state (once per process).
 * The module's one exported symbol. */
__attribute__((visibility("default"))) int luaopen_vmp_luajit(lua_State *L);

int luaopen_vmp_luajit(lua_State *L)
{
    uintptr_t gs;

    lua_newtable(L); /* the module: no functions yet */
    if (g.w != NULL || atomic_load(&g.closed))
        return 1;
    parse_options(getenv("VMP_LUAJIT_OPTIONS"));
    g.traces = calloc(MAX_TRACES, sizeof *g.traces);
    if (g.traces == NULL)
        return 1;
    gs = find_global_state(L);
    g.gs = gs;
    g.vmstate = vmstate_probe(L, gs);
    if (g.vmstate == NULL)
        fprintf(stderr, "vmp: LuaJIT's VM state word not found; samples have state unknown\n");
    g.last_exit = last_exit_probe(L, gs);
    cur_L_probe(L, gs, ref_size);
    if (cur.word == NULL)
        fprintf(stderr, "vmp: LuaJIT's running coroutine not found; samples have the stack of "
                        "the coroutine where the VM next stops\n");
    g.tid = (uint64_t)syscall(SYS_gettid);
    {
        char why[256];
        g.mechanism =
            vmp_agent__clock_setup(VMP_AGENT_SAMPLER_AUTO, g.interval_ns, why, sizeof why);
        if (why[0])
            fprintf(stderr, "vmp: %s\n", why);
    }
    open_writer();
    if (g.w == NULL)
        return 1;
    g.trace_next = take_handler(L, "trace");
    if (attach(L, on_trace_event, "trace") != 0)
        fprintf(stderr, "vmp: jit.attach failed: no traces in the profile\n");
    else
        wrap_jit_attach(L);
    /* a finalizer in the registry: lua_close() ends the recording */
    lua_newuserdata(L, 1);
    lua_newtable(L);
    lua_pushcfunction(L, on_close);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    luaL_ref(L, LUA_REGISTRYINDEX);
    new_gc_sentinel(L);
    atexit(at_exit);
    atomic_store(&g.sampling, 1);
    if (start_clock(L) != 0)
        fprintf(stderr, "vmp: cannot start the CPU-time timer: %s; no samples\n", strerror(errno));
    return 1;
}
