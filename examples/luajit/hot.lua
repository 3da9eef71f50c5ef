-- hot.lua - a LuaJIT workload for the vmp agent: one hot numeric loop
-- (its trace dominates the profile), a table-heavy phase (garbage, so GC),
-- and string work through C functions.
-- usage: luajit hot.lua [SCALE [ROUNDS]]
--   about 2 s of CPU at SCALE 1; with ROUNDS, exactly that many rounds of
--   the three phases instead (a fixed amount of work, for benchmarks)
local scale = tonumber(arg and arg[1]) or 1
local rounds = tonumber(arg and arg[2])

local function hot(n) -- vmp-hot-begin
  local x, acc = 1, 0
  for i = 1, n do
    x = (x * 1103515245 + 12345) % 2147483648
    acc = acc + x % 1024
  end
  return acc
end -- vmp-hot-end

local function tables(n)
  local t = {}
  for i = 1, n do
    t[#t + 1] = { i, tostring(i) }
    if #t > 1000 then t = {} end
  end
  return #t
end

local function strings(n)
  local s = 0
  for i = 1, n do
    s = s + #string.format("%d:%s", i, string.rep("x", i % 16))
  end
  return s
end

local t0 = os.clock()
local sink, done = 0, 0
while (rounds and done < rounds) or (not rounds and os.clock() - t0 < 2 * scale) do
  sink = sink + hot(2000000)
  sink = sink + tables(20000)
  sink = sink + strings(5000)
  done = done + 1
end
print(string.format("hot.lua: %.2f s of CPU", os.clock() - t0), sink > 0)
