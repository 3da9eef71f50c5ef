/* SPDX-License-Identifier: MIT
 *
 * vmp_test_resumer.c - a Lua C module for tests/luajit: resumes a coroutine
 * from C (lua_resume), as a C library or an embedding program does, so that
 * the coroutines case can check such a coroutine's samples too.
 *
 *   local resume = require("vmp_test_resumer")
 *   local v = resume(co)   -- what co yields; its error is raised
 */
#include <lauxlib.h>
#include <lua.h>

static int resume(lua_State *L)
{
    lua_State *co = lua_tothread(L, 1);
    int st, n;
    luaL_argcheck(L, co != NULL, 1, "coroutine expected");
    st = lua_resume(co, 0);
    if (st != 0 && st != LUA_YIELD) {
        lua_xmove(co, L, 1);
        return lua_error(L);
    }
    n = lua_gettop(co);
    lua_xmove(co, L, n);
    return n;
}

__attribute__((visibility("default"))) int luaopen_vmp_test_resumer(lua_State *L);

__attribute__((visibility("default"))) int luaopen_vmp_test_resumer(lua_State *L)
{
    lua_pushcfunction(L, resume);
    return 1;
}
