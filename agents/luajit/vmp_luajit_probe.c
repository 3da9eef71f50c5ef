/* SPDX-License-Identifier: MIT
 *
 * vmp_luajit_probe.c - the LuaJIT agent's probes: the VM's words found at
 * load (the VM state, the last exit's trace, the running coroutine), the
 * allocator wrapper that notes freed coroutines, and LuaJIT's VM event
 * handlers (jit.attach) taken over and given back.
 */
#include "vmp_luajit_int.h"

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
 * vmp_luajit__find_global_state()). */
int vmp_lj_ref_size = 8;

/* The address of global_State (see the file comment), or 0. */
uintptr_t vmp_luajit__find_global_state(lua_State *L)
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
            vmp_lj_ref_size = glref_offsets[k] == 16 ? 8 : 4;
            return p;
        }
    }
    return 0;
}

/* The address of global_State.vmstate, or NULL (see the file comment). */
volatile int32_t *vmp_luajit__vmstate_probe(lua_State *L, uintptr_t gs)
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
int vmp_luajit__take_handler(lua_State *L, const char *event)
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

/* Pop a function or nil and make it the handler of `event`: jit.vmp_luajit__attach(f,
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

int vmp_luajit__attach(lua_State *L, lua_CFunction f, const char *event)
{
    lua_pushcfunction(L, f);
    return set_handler(L, event);
}

/* Give `event` back the handler that vmp_luajit__take_handler() returned `ref` for. */
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
int vmp_luajit__is_handler(lua_State *L, lua_CFunction f, const char *event)
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
volatile uint32_t *vmp_luajit__last_exit_probe(lua_State *L, uintptr_t gs)
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
    texit = vmp_luajit__take_handler(L, "texit");
    trace = vmp_luajit__take_handler(L, "trace");
    if (vmp_luajit__attach(L, probe_texit, "texit") == 0 &&
        vmp_luajit__attach(L, probe_trace, "trace") == 0 &&
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

vmp_lj_cur_state vmp_lj_cur;

/* The GC reference of `size` bytes at `addr` (a lua_State's address). */
static uintptr_t read_ref(uintptr_t addr, int size)
{
    return size == 8 ? (uintptr_t) * (volatile uint64_t *)addr
                     : (uintptr_t) * (volatile uint32_t *)addr;
}

vmp_lj_watched vmp_lj_watch[WATCH];
volatile uint32_t vmp_lj_n_watch;

/* ASYNC-SIGNAL-SAFE: the coroutine that runs, noted in the watch list, or 0
 * (not found, or the list is full until the next callback). */
uintptr_t vmp_luajit__running_coroutine(void)
{
    uintptr_t co;
    uint32_t i, n = vmp_lj_n_watch;
    if (vmp_lj_cur.word == NULL)
        return 0;
    co = read_ref((uintptr_t)vmp_lj_cur.word, vmp_lj_cur.size);
    if (co == 0 || co == vmp_lj_cur.main_L)
        return co;
    for (i = 0; i < n; i++)
        if (vmp_lj_watch[i].co == co && !vmp_lj_watch[i].freed)
            return co;
    if (n == WATCH)
        return 0;
    vmp_lj_watch[n].co = co;
    vmp_lj_watch[n].freed = 0;
    atomic_signal_fence(memory_order_seq_cst);
    vmp_lj_n_watch = n + 1;
    return co;
}

/* @return 1 if `co` can be read: the main thread, or watched and not freed. */
int vmp_luajit__coroutine_alive(uintptr_t co)
{
    uint32_t i;
    if (co == vmp_lj_cur.main_L)
        return 1;
    for (i = 0; i < vmp_lj_n_watch; i++)
        if (vmp_lj_watch[i].co == co)
            return !vmp_lj_watch[i].freed;
    return 0;
}

/* The program's allocator, with the frees of watched coroutines noted (a
 * lua_State is freed whole, never reallocated). */
static void *vmp_luajit_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    if (nsize == 0 && ptr != NULL) {
        uint32_t i, n = vmp_lj_n_watch;
        for (i = 0; i < n; i++)
            if (vmp_lj_watch[i].co == (uintptr_t)ptr)
                vmp_lj_watch[i].freed = 1;
    }
    return vmp_lj_cur.alloc(ud, ptr, osize, nsize);
}

static uintptr_t probe_ref[64];
static int probe_ref_n;

/* Inside a coroutine: keep the candidates that hold it. */
static int probe_in_coroutine(lua_State *co)
{
    int i, n = 0;
    for (i = 0; i < probe_ref_n; i++) {
        if (read_ref(probe_ref[i], vmp_lj_cur.size) == (uintptr_t)co)
            probe_ref[n++] = probe_ref[i];
    }
    probe_ref_n = n;
    return 0;
}

/* Find global_State.cur_L (`size` bytes a reference): the one word
 * that holds `L` now and the coroutine inside a coroutine.  Then wrap the
 * allocator.  Sets `cur`; nothing when not found. */
void vmp_luajit__cur_L_probe(lua_State *L, uintptr_t gs, int size)
{
    lua_State *co;
    size_t i;

    if (gs == 0)
        return;
    vmp_lj_cur.size = size;
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
    vmp_lj_cur.main_L = lua_pushthread(L) ? (uintptr_t)L : 0;
    lua_pop(L, 1);
    vmp_lj_cur.alloc = lua_getallocf(L, &vmp_lj_cur.alloc_ud);
    lua_setallocf(L, vmp_luajit_alloc, vmp_lj_cur.alloc_ud);
    vmp_lj_cur.wrapped = 1;
    vmp_lj_cur.word = (volatile void *)probe_ref[0];
}
