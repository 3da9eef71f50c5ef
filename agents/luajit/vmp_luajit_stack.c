/* SPDX-License-Identifier: MIT
 *
 * vmp_luajit_stack.c - the LuaJIT agent's samples: the signal handler, the
 * samples queued until LuaJIT's profiler calls back at a safe point, and
 * the Lua stacks (the running coroutine's, then the main thread's) written
 * with them (spec.md §5.12).
 */
#include "vmp_luajit_int.h"

/* ---- Samples waiting for their Lua stack ------------------------------------------------ */

/* A sample taken by the signal handler, written once LuaJIT's profiler
 * calls back at a safe point with the Lua stack (vmp_luajit__on_lua_stack()).  One
 * producer (the handler) and one consumer (the callback), on the same
 * thread: the handler fills a slot before it moves the head. */
typedef struct pending {
    uint64_t pc, generation, blame;
    uintptr_t co; /* the coroutine that ran (vmp_luajit__running_coroutine()), or 0 */
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
    p->co = vmp_luajit__running_coroutine();
    p->pc = s->pc;
    p->generation = vmp_writer_generation(vmp_lj.w);
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
static uint32_t coroutine_frames(lua_State *L, uintptr_t co, const vmp_frame *main, uint32_t n,
                                 vmp_frame *out);

void vmp_luajit__pend_flush(lua_State *L, const vmp_frame *lua, uint32_t n, const vmp_frame *main,
                            uint32_t n_main)
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
        s.thread = vmp_lj.tid;
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
        vmp_writer_sample(vmp_lj.w, &s);
        atomic_signal_fence(memory_order_seq_cst);
        pend_tail = pend_tail + 1;
    }
    /* the coroutines noted so far are read: watch the next ones (a sample
     * queued after this loop finds its coroutine unwatched, and gets the
     * stack of the next callback's coroutine) */
    if (L != NULL)
        vmp_lj_n_watch = 0;
}

uint64_t vmp_luajit__function_for(lua_State *L, const char *source, int first, int last,
                                  const char *called);
void vmp_luajit__new_gc_sentinel(lua_State *L);
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
static uint32_t coroutine_frames(lua_State *L, uintptr_t co, const vmp_frame *main, uint32_t n,
                                 vmp_frame *out)
{
    lua_State *of = (lua_State *)co;
    uint32_t k;

    if (!vmp_luajit__coroutine_alive(co))
        return 0;
    /* kept on L's stack while its frames are read: the descriptions may
     * allocate, and a GC step must not free it meanwhile */
    lua_pushthread(of);
    lua_xmove(of, L, 1);
    k = lua_frames(L, of, out, LUA_FRAMES);
    lua_pop(L, 1);
    if (k > 0 && co != vmp_lj_cur.main_L && n > 0) {
        memcpy(out + k, main, n * sizeof *main);
        k += n;
    }
    return k;
}

/* The FUNCTION ids of the frames seen, by their chunk name's address (an
 * interned string) and lines: vmp_luajit__function_for() costs a formatted key and a
 * table lookup, this a few loads.  A miss or a collision asks
 * vmp_luajit__function_for(). */
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
    ar->name = NULL; /* kept when LuaJIT finds no name */
    (void)lua_getinfo(of, "n", ar);
    fn_cache[i].id =
        vmp_luajit__function_for(L, ar->source, ar->linedefined, ar->lastlinedefined, ar->name);
    fn_cache[i].source = ar->source;
    fn_cache[i].first = ar->linedefined;
    fn_cache[i].last = ar->lastlinedefined;
    return fn_cache[i].id;
}

/* LuaJIT's profiler callback, at a safe point of the VM on the profiled
 * thread: the Lua stack (lua_getstack, innermost first, Lua functions
 * only) for the samples queued since the last call. */
void vmp_luajit__keep_trace_handler(lua_State *L);

void vmp_luajit__on_lua_stack(void *data, lua_State *L, int samples, int vmstate)
{
    vmp_frame lua[2 * LUA_FRAMES], main[LUA_FRAMES];
    uint32_t n, n_main = 0;

    (void)data;
    (void)samples;
    (void)vmstate;
    if (vmp_lj.w == NULL || atomic_load(&vmp_lj.closed))
        return;
    n = lua_frames(L, L, lua, LUA_FRAMES);
    /* in a coroutine: the main thread's frames below, where it resumed the
     * coroutines (the intermediate coroutines of a nested resume are not
     * known: LuaJIT keeps no link to a resumer) */
    if (vmp_lj_cur.main_L != 0 && (uintptr_t)L != vmp_lj_cur.main_L) {
        n_main = lua_frames(L, (lua_State *)vmp_lj_cur.main_L, main, LUA_FRAMES);
        memcpy(lua + n, main, n_main * sizeof *main);
    }
    vmp_luajit__pend_flush(L, lua, n + n_main, main, n_main);
    vmp_luajit__keep_trace_handler(L);
    if (vmp_lj.need_sentinel) {
        vmp_lj.need_sentinel = 0;
        vmp_luajit__new_gc_sentinel(L);
    }
}

/* ---- The signal handler ------------------------------------------------------------- */

/* ASYNC-SIGNAL-SAFE: reads the pc and the state word, writes one sample. */
void vmp_luajit__on_sigprof(int sig, siginfo_t *si, void *uc)
{
    int saved_errno = errno;
    vmp_sample s;
    vmp_frame f;
    int32_t st;
    int lj;

    (void)sig;
    atomic_fetch_add(&vmp_lj.in_handler, 1);
    if (atomic_load(&vmp_lj.sampling) && vmp_lj.w != NULL) {
        memset(&s, 0, sizeof s);
        s.thread = vmp_lj.tid;
        s.pc = vmp_agent__pc(uc);
        s.generation = VMP_GENERATION_CURRENT;
        /* the intervals of the thread's CPU time since its previous sample
         * (vmp_agent_clock.h); 0: the signal came early, no sample */
        s.weight = vmp_agent__clock_weight(&vmp_lj.clock);
        st = vmp_lj.vmstate != NULL ? *vmp_lj.vmstate : INT32_MIN;
        /* blame: the running trace (compiled code calls C helpers of the
         * VM: allocation, GC steps), else the trace of the last exit */
        if (st > 0 && st < MAX_TRACES)
            s.blame = vmp_lj.traces[st].code_id;
        else if (st <= 0 && vmp_lj.last_exit != NULL && *vmp_lj.last_exit < MAX_TRACES)
            s.blame = vmp_lj.traces[*vmp_lj.last_exit].code_id;
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
        lj = vmp_lj.lj_signal != NULL && *vmp_lj.lj_profile_g != NULL;
        if (s.weight > 0 &&
            (!lj || !pend_push(&s, s.state == ST_INTERP ||
                                       (st > 0 && st < MAX_TRACES &&
                                        s.pc - vmp_lj.traces[st].start < vmp_lj.traces[st].size))))
            vmp_writer_sample(vmp_lj.w, &s);
        if (lj) /* LuaJIT's profiler, still running: call vmp_luajit__on_lua_stack() soon */
            vmp_lj.lj_signal(SIGPROF);
    }
    /* always (a no-op for other signals): the clock's first signal can come
     * before vmp_luajit__start_clock() has returned, and an overflow not re-armed stops
     * the clock for good (it did, in about one run in 60 at 100 us) */
    vmp_agent__clock_rearm(&vmp_lj.clock, si);
    atomic_fetch_sub(&vmp_lj.in_handler, 1);
    errno = saved_errno;
}
