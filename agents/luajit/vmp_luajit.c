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
 * call vmp_luajit__on_lua_stack() at its next safe point: that reads the Lua stack and
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
 *
 * This file: options, the header, the life cycle, GC cycles and the clock;
 * vmp_luajit_int.h lists the other files.
 */
#include "vmp_luajit_int.h"

vmp_lj_state vmp_lj;

/* ---- Header vocabulary (spec.md §5.1) ------------------------------------ */

/* the names of the VM states (enum in vmp_luajit_int.h), in their order */
static const char *const states[] = {"trace",  "interp", "c",   "gc",     "exit",
                                     "record", "opt",    "asm", "unknown"};
static const char *const code_kinds[] = {"trace"};

static const char *const event_kinds[] = {"flush", "gc"};

/* ---- Options ------------------------------------------------------------------ */

/* VMP_LUAJIT_OPTIONS: comma-separated file=PATH, interval=TIME (1us to
 * 1s), format=1.2|2.0 (2.0: samples in SAMPLE_BLOCKs, their times in us at
 * intervals of 10 us or more), filemode=OCTAL (the file's permission
 * bits, default 600) and flush=TIME (10ms to 60s: what a crash loses at
 * most, vmp_agent_file.h).  A bad option is said on stderr and its default
 * kept. */
static void parse_options(const char *text)
{
    snprintf(vmp_lj.file, sizeof vmp_lj.file, "vmp-%ld.vmp", (long)getpid());
    vmp_lj.interval_ns = 1000000;
    while (text != NULL && *text != '\0') {
        const char *end = strchr(text, ',');
        size_t len = end ? (size_t)(end - text) : strlen(text);
        const char *eq = memchr(text, '=', len);
        size_t klen = eq ? (size_t)(eq - text) : len;
        const char *val = eq ? eq + 1 : "";
        size_t vlen = eq ? len - klen - 1 : 0;
        uint64_t ns;
        if (klen == 4 && memcmp(text, "file", 4) == 0 && vlen > 0 && vlen < sizeof vmp_lj.file) {
            memcpy(vmp_lj.file, val, vlen);
            vmp_lj.file[vlen] = '\0';
        } else if (klen == 8 && memcmp(text, "interval", 8) == 0 &&
                   vmp_agent__parse_interval(&ns, val, vlen) == 0 && ns >= 1000 &&
                   ns <= 1000000000) {
            vmp_lj.interval_ns = ns;
        } else if (klen == 6 && memcmp(text, "format", 6) == 0 && vlen == 3 &&
                   (memcmp(val, "1.2", 3) == 0 || memcmp(val, "2.0", 3) == 0)) {
            vmp_lj.format_major = memcmp(val, "2.0", 3) == 0 ? 2 : 1;
        } else if (klen == 5 && memcmp(text, "flush", 5) == 0 &&
                   vmp_agent__parse_interval(&ns, val, vlen) == 0 && ns >= VMP_AGENT_MIN_FLUSH_NS &&
                   ns <= VMP_AGENT_MAX_FLUSH_NS) {
            vmp_lj.flush_ns = ns;
        } else if (klen == 8 && memcmp(text, "filemode", 8) == 0 &&
                   vmp_agent__parse_file_mode(&vmp_lj.file_mode, val, vlen) == 0) {
        } else if (len > 0) {
            fprintf(stderr, "vmp: option '%.*s' not understood; ignored\n", (int)len, text);
        }
        text = end ? end + 1 : NULL;
    }
}

/* ---- Life cycle -------------------------------------------------------------------- */

/* Say once when another profiler took the samples from the agent: a new
 * SIGPROF handler (luajit -jp installs LuaJIT's own, async-profiler or the
 * program theirs), or LuaJIT's profiler started again with another callback
 * (-jp stops the agent's profile to start its own: one profile at a time). */
static void check_profiler(void)
{
    void *volatile *ps = vmp_lj.lj_profile_g; /* &ProfileState.g; cb follows */
    if (vmp_lj.profiler_lost || !vmp_lj.clock_started)
        return;
    if (vmp_agent__sigprof_is(vmp_luajit__on_sigprof) &&
        (ps == NULL || ps[1] == (void *)(uintptr_t)vmp_luajit__on_lua_stack))
        return;
    vmp_lj.profiler_lost = 1;
    fprintf(stderr,
            "vmp: another profiler took SIGPROF or LuaJIT's profiler (luajit -jp?); "
            "vmp took no more samples into %s from then on\n",
            vmp_lj.file);
}

/* Say once when the file is no longer at its path (deleted, replaced):
 * checked at each GC cycle and at the end. */
static void check_file(void)
{
    if (vmp_lj.w != NULL)
        vmp_agent__file_check(&vmp_lj.file_id, vmp_lj.file, 0);
}

static void stop_recording(void)
{
    vmp_writer_totals tot;

    if (atomic_load(&vmp_lj.closed))
        return;
    check_profiler();
    check_file();
    if (atomic_exchange(&vmp_lj.closed, 1))
        return;
    atomic_store(&vmp_lj.sampling, 0);
    if (vmp_lj.clock_started)
        vmp_agent__clock_stop(&vmp_lj.clock);
    if (!vmp_agent__wait_handlers(&vmp_lj.in_handler) || vmp_lj.w == NULL)
        return;
    vmp_luajit__pend_flush(NULL, NULL, 0, NULL, 0); /* those the profiler did not call back for */
    memset(&tot, 0, sizeof tot);
    if (vmp_writer_close(vmp_lj.w, &tot) < 0)
        fprintf(stderr, "vmp: error writing %s: %s\n", vmp_lj.file,
                tot.write_errno ? strerror(tot.write_errno) : "write failed");
    else
        fprintf(stderr, "vmp: wrote %llu samples (%llu dropped) to %s\n",
                (unsigned long long)tot.samples_written,
                (unsigned long long)(tot.dropped_full + tot.dropped_write), vmp_lj.file);
    vmp_lj.w = NULL;
}

/* ---- GC cycles --------------------------------------------------------------------- */

void vmp_luajit__new_gc_sentinel(lua_State *L);

/* The finalizer of an unreachable userdata runs when a GC cycle ends: an
 * event "gc" at that time, and a new sentinel for the next cycle. */
static int on_gc_cycle(lua_State *L)
{
    if (vmp_lj.w == NULL || atomic_load(&vmp_lj.closed))
        return 0;
    check_profiler();
    check_file();
    {
        lua_Debug ar;

        vmp_luajit__check_write(vmp_writer_event(vmp_lj.w, EVT_GC, 0, 0, vmp_lj.tid, 0, NULL));
        /* the next sentinel, unless no Lua function runs below this finalizer:
         * lua_close() runs every finalizer with an empty stack, and must not
         * get new objects then; vmp_luajit__on_lua_stack() makes it in that case */
        if (lua_getstack(L, 1, &ar))
            vmp_luajit__new_gc_sentinel(L);
        else
            vmp_lj.need_sentinel = 1;
    }
    return 0;
}

/* A userdata that nothing refers to, with on_gc_cycle() as its finalizer. */
void vmp_luajit__new_gc_sentinel(lua_State *L)
{
    lua_newuserdata(L, 1);
    lua_newtable(L);
    lua_pushcfunction(L, on_gc_cycle);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    lua_pop(L, 1);
}

/* The program's own allocator back (vmp_luajit__cur_L_probe() wrapped it):
 * lua_close() frees everything after the finalizers, when this module may
 * be unloaded already. */
static void unwrap_allocator(lua_State *L)
{
    if (vmp_lj_cur.wrapped) {
        lua_setallocf(L, vmp_lj_cur.alloc, vmp_lj_cur.alloc_ud);
        vmp_lj_cur.wrapped = 0;
    }
}

static int on_close(lua_State *L)
{
    stop_recording();
    unwrap_allocator(L);
    return 0;
}

static void at_exit(void)
{
    stop_recording();
}

/* &ProfileState.g of LuaJIT's profiler (lj_profile.c: a static struct whose
 * first members are g, cb, data), found after luaJIT_profile_start() by
 * their values (this VM's global_State, vmp_luajit__on_lua_stack, NULL) in the writable
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
                if (w[k] == vmp_lj.gs && w[k + 1] == (uintptr_t)vmp_luajit__on_lua_stack &&
                    w[k + 2] == 0) {
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
int vmp_luajit__start_clock(lua_State *L)
{
    struct sigaction sa;

    if (vmp_lj.mechanism == VMP_AGENT_MECH_NONE)
        return -1;
    vmp_lj.clock.fd = -1; /* no perf event yet: the handler re-arms none */
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = vmp_luajit__on_sigprof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGPROF, &sa, NULL) != 0)
        return -1;
    if (L != NULL) {
        /* LuaJIT's profiler, for the Lua stacks: it installs its own SIGPROF
         * handler (and puts ours back when it stops); its own timer, at
         * 1000 s, stays silent.  Ours calls its handler after each sample. */
        struct sigaction lj;
        luaJIT_profile_start(L, "fi1000000", vmp_luajit__on_lua_stack, NULL);
        vmp_lj.lj_profile_g = vmp_lj.gs != 0 ? find_profile_g() : NULL;
        if (vmp_lj.lj_profile_g != NULL && sigaction(SIGPROF, NULL, &lj) == 0 &&
            !(lj.sa_flags & SA_SIGINFO) && lj.sa_handler != SIG_DFL && lj.sa_handler != SIG_IGN)
            vmp_lj.lj_signal = lj.sa_handler;
        if (vmp_lj.lj_signal == NULL) {
            luaJIT_profile_stop(L);
            fprintf(stderr, "vmp: LuaJIT's profiler state not found; samples have no Lua stack\n");
        }
        if (sigaction(SIGPROF, &sa, NULL) != 0)
            return -1;
    }
    if (vmp_agent__clock_start(&vmp_lj.clock, vmp_lj.tid, 0) != 0)
        return -1;
    vmp_lj.clock_started = 1;
    return 0;
}

static void open_writer(void)
{
    char interval[32];
    const char *labels[10];
    vmp_writer_meta meta;
    vmp_writer_options wo = VMP_WRITER_OPTIONS_INIT;
    vmp_status st;

    vmp_agent__format_interval(interval, sizeof interval, vmp_lj.interval_ns);
    labels[0] = "interval";
    labels[1] = interval;
    labels[2] = "vmstate";
    labels[3] = vmp_lj.vmstate != NULL ? "found" : "not found";
    labels[4] = "blame";
    labels[5] = vmp_lj.last_exit != NULL ? "last exit" : "none";
    labels[6] = "sampler"; /* the clock that runs (vmp_agent_clock.h) */
    labels[7] = vmp_agent__clock_label(vmp_lj.mechanism);
    labels[8] = "coroutine"; /* whose stack a sample has */
    labels[9] = vmp_lj_cur.word != NULL ? "running" : "next safe point";
    memset(&meta, 0, sizeof meta);
    meta.vm_name = "LuaJIT";
    meta.vm_version =
        strncmp(LUAJIT_VERSION, "LuaJIT ", 7) == 0 ? &LUAJIT_VERSION[7] : LUAJIT_VERSION;
    meta.sample_interval_ns = vmp_lj.interval_ns;
    VMP_WRITER_META_LIST(meta, states, states);
    VMP_WRITER_META_LIST(meta, code_kinds, code_kinds);
    VMP_WRITER_META_LIST(meta, event_kinds, event_kinds);
    meta.labels = labels;
    meta.n_labels = 5;
    wo.lazy_functions = 1;
    wo.lazy_symbols = 1;
    wo.format_major = vmp_lj.format_major; /* times in us from a 10us interval on */
    wo.file_mode = vmp_lj.file_mode;
    wo.chunk_age_ms = vmp_agent__flush_ms(vmp_lj.flush_ns);
    errno = 0;
    st = vmp_writer_open(&vmp_lj.w, vmp_lj.file, &meta, &wo);
    if (st < 0) {
        vmp_lj.w = NULL;
        fprintf(stderr, "vmp: cannot open %s: %s; the program continues without profiling\n",
                vmp_lj.file, st == VMP_ERR_IO ? vmp_agent__open_why(errno) : vmp_status_str(st));
        return;
    }
    vmp_agent__file_note(&vmp_lj.file_id, vmp_lj.file);
    /* LuaJIT allocates its machine code areas near the binary: one zone
     * spans the address space, traces give the real extents */
    vmp_luajit__check_write(vmp_writer_code_zone(vmp_lj.w, &vmp_lj.zone, "mcode", 0, UINT64_MAX));
    vmp_luajit__check_write(vmp_writer_add_loaded_modules(vmp_lj.w));
    /* the sampled thread, by its kernel name */
    {
        char path[64], comm[32] = "";
        FILE *f;
        snprintf(path, sizeof path, "/proc/self/task/%llu/comm", (unsigned long long)vmp_lj.tid);
        f = fopen(path, "r");
        if (f != NULL) {
            if (fgets(comm, sizeof comm, f) != NULL)
                comm[strcspn(comm, "\n")] = '\0';
            fclose(f);
        }
        vmp_luajit__check_write(vmp_writer_thread(vmp_lj.w, vmp_lj.tid, comm[0] ? comm : "lua", 0));
    }
}

/* require "vmp_luajit": start recording this Lua state (once per process).
 * The module's one exported symbol. */
__attribute__((visibility("default"))) int luaopen_vmp_luajit(lua_State *L);

int luaopen_vmp_luajit(lua_State *L)
{
    uintptr_t gs;

    lua_newtable(L); /* the module: no functions yet */
    if (vmp_lj.w != NULL || atomic_load(&vmp_lj.closed))
        return 1;
    parse_options(getenv("VMP_LUAJIT_OPTIONS"));
    vmp_lj.traces = calloc(MAX_TRACES, sizeof *vmp_lj.traces);
    if (vmp_lj.traces == NULL)
        return 1;
    gs = vmp_luajit__find_global_state(L);
    vmp_lj.gs = gs;
    vmp_lj.vmstate = vmp_luajit__vmstate_probe(L, gs);
    if (vmp_lj.vmstate == NULL)
        fprintf(stderr, "vmp: LuaJIT's VM state word not found; samples have state unknown\n");
    vmp_lj.last_exit = vmp_luajit__last_exit_probe(L, gs);
    vmp_luajit__cur_L_probe(L, gs, vmp_lj_ref_size);
    if (vmp_lj_cur.word == NULL)
        fprintf(stderr, "vmp: LuaJIT's running coroutine not found; samples have the stack of "
                        "the coroutine where the VM next stops\n");
    vmp_lj.tid = (uint64_t)syscall(SYS_gettid);
    {
        char why[256];
        vmp_lj.mechanism =
            vmp_agent__clock_setup(VMP_AGENT_SAMPLER_AUTO, vmp_lj.interval_ns, why, sizeof why);
        if (why[0])
            fprintf(stderr, "vmp: %s\n", why);
    }
    open_writer();
    if (vmp_lj.w == NULL) { /* no recording: leave the VM as it was */
        unwrap_allocator(L);
        vmp_lj_cur.word = NULL;
        return 1;
    }
    vmp_lj.trace_next = vmp_luajit__take_handler(L, "trace");
    if (vmp_luajit__attach(L, vmp_luajit__on_trace_event, "trace") != 0)
        fprintf(stderr, "vmp: jit.attach failed: no traces in the profile\n");
    else
        vmp_luajit__wrap_jit_attach(L);
    /* a finalizer in the registry: lua_close() ends the recording */
    lua_newuserdata(L, 1);
    lua_newtable(L);
    lua_pushcfunction(L, on_close);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    luaL_ref(L, LUA_REGISTRYINDEX);
    vmp_luajit__new_gc_sentinel(L);
    atexit(at_exit);
    atomic_store(&vmp_lj.sampling, 1);
    if (vmp_luajit__start_clock(L) != 0)
        fprintf(stderr, "vmp: cannot start the CPU-time timer: %s; no samples\n", strerror(errno));
    return 1;
}
