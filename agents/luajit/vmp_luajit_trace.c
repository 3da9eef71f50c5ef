/* SPDX-License-Identifier: MIT
 *
 * vmp_luajit_trace.c - the LuaJIT agent's traces (code objects of the
 * "mcode" zone, freed by flushes: spec.md §5.7, §5.10) and Lua functions
 * (FUNCTION records, named as the calling code knows them: §5.5).
 */
#include "vmp_luajit_int.h"

/* ---- Traces (the JIT's "trace" events) ------------------------------------------------ */

void vmp_luajit__check_write(vmp_status st)
{
    static int warned;
    vmp_agent__check_write(st, vmp_lj.file, &warned);
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
    if (tr < MAX_TRACES && vmp_lj.traces[tr].code_id != 0) {
        vmp_luajit__check_write(vmp_writer_code_free(vmp_lj.w, vmp_lj.traces[tr].code_id, NULL));
        vmp_lj.traces[tr].code_id = 0;
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
uint64_t vmp_luajit__function_for(lua_State *L, const char *source, int first, int last,
                                  const char *called)
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
    id = ++vmp_lj.next_function_id;
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
    vmp_luajit__check_write(vmp_writer_function(vmp_lj.w, &fn));
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
                id = vmp_luajit__function_for(L, lua_tostring(L, -3), (int)lua_tointeger(L, -2),
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
        const live_trace *t = &vmp_lj.traces[i];
        if (t->code_id != 0 && t->start < start + size && start < t->start + t->size)
            free_trace(i);
    }
    link_of(L, tr, link, sizeof link);
    if (strcmp(link, "stitch") == 0) { /* and the function it stitches to */
        size_t n = strlen(link);
        link[n++] = ' ';
        location(L, fi, 0, link + n, sizeof link - n);
    }
    snprintf(name, sizeof name, "TRACE %u %s %s", tr,
             vmp_lj.recording == tr ? vmp_lj.recording_start : "?", link);
    memset(&co, 0, sizeof co);
    co.id = ++vmp_lj.next_code_id;
    co.zone = vmp_lj.zone;
    co.kind = KIND_TRACE;
    co.name = name;
    co.function = function_id(L, fi);
    co.start = start;
    co.size = size;
    vmp_luajit__check_write(vmp_writer_code_add(vmp_lj.w, &co));
    vmp_lj.traces[tr].code_id = co.id;
    vmp_lj.traces[tr].start = start;
    vmp_lj.traces[tr].size = size;
}

/* jit.attach handler: (what, tr, func, pc, parent, exit) for "start",
 * (what, tr, func) for "stop", (what) for "flush". */
static int on_trace(lua_State *L)
{
    const char *what = lua_tostring(L, 1);
    uint32_t tr = (uint32_t)lua_tointeger(L, 2), i;

    if (what == NULL || vmp_lj.w == NULL || atomic_load(&vmp_lj.closed))
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
        vmp_lj.recording = tr;
        snprintf(vmp_lj.recording_start, sizeof vmp_lj.recording_start, "%s%s", from, loc);
    } else if (strcmp(what, "stop") == 0 && tr > 0 && tr < MAX_TRACES) {
        add_trace(L, tr, 3);
    } else if (strcmp(what, "flush") == 0) {
        for (i = 1; i < MAX_TRACES; i++)
            free_trace(i);
        vmp_luajit__check_write(vmp_writer_event(vmp_lj.w, EVT_FLUSH, 0, 0, 0, 0, NULL));
    }
    return 0;
}

/* jit.attach handler of "trace": the agent's, then the one it replaced
 * (luajit -jv's, say) with the same arguments. */
int vmp_luajit__on_trace_event(lua_State *L)
{
    int n = lua_gettop(L), i;

    on_trace(L);
    lua_settop(L, n);
    if (vmp_lj.trace_next != LUA_NOREF) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, vmp_lj.trace_next);
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
 * detaching it (jit.vmp_luajit__attach(f)) removes it.  Everything else goes to
 * LuaJIT's jit.attach. */
static int attach_wrapper(lua_State *L)
{
    const char *event = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : NULL;

    luaL_checktype(L, 1, LUA_TFUNCTION);
    if (event != NULL && strcmp(event, "trace") == 0 &&
        !(lua_iscfunction(L, 1) && lua_tocfunction(L, 1) == vmp_luajit__on_trace_event)) {
        if (vmp_lj.trace_next != LUA_NOREF)
            luaL_unref(L, LUA_REGISTRYINDEX, vmp_lj.trace_next);
        lua_pushvalue(L, 1);
        vmp_lj.trace_next = luaL_ref(L, LUA_REGISTRYINDEX);
        return 0;
    }
    if (event == NULL && vmp_lj.trace_next != LUA_NOREF) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, vmp_lj.trace_next);
        if (lua_rawequal(L, -1, 1)) {
            luaL_unref(L, LUA_REGISTRYINDEX, vmp_lj.trace_next);
            vmp_lj.trace_next = LUA_NOREF;
        }
        lua_pop(L, 1);
    }
    lua_pushvalue(L, lua_upvalueindex(1)); /* LuaJIT's jit.attach */
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 0);
    return 0;
}

/* Put attach_wrapper() in the place of jit.attach. */
void vmp_luajit__wrap_jit_attach(lua_State *L)
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
void vmp_luajit__keep_trace_handler(lua_State *L)
{
    if (vmp_luajit__is_handler(L, vmp_luajit__on_trace_event, "trace"))
        return;
    if (vmp_lj.trace_next != LUA_NOREF)
        luaL_unref(L, LUA_REGISTRYINDEX, vmp_lj.trace_next);
    vmp_lj.trace_next = vmp_luajit__take_handler(L, "trace");
    vmp_luajit__attach(L, vmp_luajit__on_trace_event, "trace");
}
