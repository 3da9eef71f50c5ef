-- cheavy.lua - a LuaJIT workload whose Lua functions spend their time in C:
-- string.format and concatenation, table.sort with a Lua comparator (C that
-- calls back into Lua), string.gsub with a pattern, and a numeric loop.
-- usage: luajit cheavy.lua [ROUNDS]
local rounds = tonumber(arg and arg[1]) or 20

local function format_rows(n)
  local parts = {}
  for i = 1, n do
    parts[#parts + 1] = string.format("%08d|%-12s|%10.3f", i, "row" .. i, i / 7)
  end
  return #table.concat(parts, "\n")
end

local function sort_records(n)
  local t = {}
  for i = 1, n do t[i] = { key = (i * 7919) % n, name = "r" .. i } end
  table.sort(t, function(a, b) return a.key < b.key end)
  return t[1].key
end

local function rewrite(text, times)
  local s = 0
  for _ = 1, times do
    local out = text:gsub("(%w+)=(%w+)", "%2=%1")
    s = s + #out
  end
  return s
end

local function checksum(n)
  local a, b = 1, 0
  for i = 1, n do
    a = (a + i) % 65521
    b = (b + a) % 65521
  end
  return b * 65536 + a
end

local text = string.rep("alpha=beta gamma=delta epsilon=zeta ", 40)
local sink = 0
for _ = 1, rounds do
  sink = sink + format_rows(20000)
  sink = sink + sort_records(20000)
  sink = sink + rewrite(text, 300)
  sink = sink + checksum(3000000)
end
print("cheavy.lua", sink > 0)
