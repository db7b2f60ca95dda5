package redis

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	goredis "github.com/redis/go-redis/v9"
)

// A limiter's script is its algorithm's body after a line of constants
// (the policy in ns and cost units, and the TTL slack in ms, so that they
// are not sent with every call), the helpers it uses, and the lines that
// read the time. Every script takes the same arguments:
//
//	KEYS[1]  the state key, "{prefix:key}"; KEYS[2] the sliding log's sorted
//	         set, "{prefix:key}:log" (same hash tag, same Cluster slot)
//	ARGV[1]  now, whole seconds since the clock's zero (floor)
//	ARGV[2]  now, the nanoseconds past ARGV[1], in [0, 1e9)
//	ARGV[3]  cost, clamped to capacity+1 (anything above the capacity is
//	         rejected with RetryAfter Never, whatever its size)
//	ARGV[4]  the start of now's aligned window, seconds (window algorithms)
//	ARGV[5]  the same, nanoseconds
//
// and reply {allowed (0 or 1), remaining, retry-after ns (-1: Never),
// reset-after ns}. Server-time scripts ignore ARGV[1], [2], [4] and [5].
//
// Lua numbers in Redis are doubles: integers are exact up to 2^53 (104 days
// in ns), and an instant of a 100-year run is not. So instants travel and
// are stored as two exact numbers, seconds and nanoseconds ("s:ns"), and
// arithmetic is done on differences, which the policy bounds (every span the
// scripts compute is below 2^51 ns: see maxSpan). A difference between two
// instants further apart than 2^53 ns is inexact, but then it only decides
// "long ago" or "far ahead", never a threshold. Products of two spans (the
// sliding counter's weighted estimate) are computed exactly in two 52-bit
// limbs. Server-time scripts read TIME instead of ARGV[1..2] and compute
// the window start themselves.

// helpers are the Lua functions the scripts share, in dependency order:
// exact integer helpers on doubles and the state's text form. A script
// defines only those it uses (each definition costs a closure per call).
var helpers = []struct{ name, code string }{
	{"fdiv", `
-- floor(a/b) for integers |a| < 2^52, 0 < b < 2^52, exactly (the float
-- quotient is off by at most one).
local function fdiv(a, b)
  local q = math.floor(a / b)
  local r = a - q * b
  if r < 0 then q = q - 1 elseif r >= b then q = q + 1 end
  return q
end`},
	{"diff", `
-- instants are (s, ns) with 0 <= ns < 1e9
local function diff(as, ans, bs, bns) return (as - bs) * E9 + (ans - bns) end`},
	{"add", `
local function add(s, ns, d)
  local x = ns + d
  local c = fdiv(x, E9)
  return s + c, x - c * E9
end`},
	{"lt", `
local function lt(as, ans, bs, bns) return as < bs or (as == bs and ans < bns) end`},
	{"fields", `
local function fields(st)
  local f = {}
  for x in string.gmatch(st, '[^:]+') do f[#f + 1] = tonumber(x) end
  return f
end`},
	{"ttl", `
-- TTL in ms of state that matters for span ns more (virtual or real time).
local function ttl(span)
  if span < 0 then span = 0 end
  return math.ceil(span / 1000000) + slack
end`},
}

// luaCore opens every script. Integers are formatted with %d (a C long:
// Redis on a 64-bit platform), never through tostring's %.14g.
const luaCore = `
local E9 = 1000000000
local cost = tonumber(ARGV[3])
`

// luaWide is exact arithmetic on products of two spans (the sliding
// counter's weighted estimate), in two 52-bit limbs.
const luaWide = `
local P26 = 67108864
local P52 = 4503599627370496
-- a*b as hi*2^52 + lo for integers 0 <= a, b < 2^52.
local function mul(a, b)
  local a1 = math.floor(a / P26)
  local a0 = a - a1 * P26
  local b1 = math.floor(b / P26)
  local b0 = b - b1 * P26
  local mid = a1 * b0 + a0 * b1
  local m1 = math.floor(mid / P26)
  local lo = (mid - m1 * P26) * P26 + a0 * b0
  local c = math.floor(lo / P52)
  return a1 * b1 + m1 + c, lo - c * P52
end
local function mulless(a, b, x, y)
  local h1, l1 = mul(a, b)
  local h2, l2 = mul(x, y)
  return lt(h1, l1, h2, l2)
end
-- floor(a*b/d), for a quotient below 2^51.
local function muldiv(a, b, d)
  local h, l = mul(a, b)
  local q = math.floor((h * P52 + l) / d)
  if q > P52 / 2 then q = P52 / 2 end
  if q < 0 then q = 0 end
  while q > 0 do
    local qh, ql = mul(q, d)
    if not lt(h, l, qh, ql) then break end
    q = q - 1
  end
  while true do
    local qh, ql = mul(q + 1, d)
    if lt(h, l, qh, ql) then break end
    q = q + 1
  end
  return q
end
local function muldivceil(a, b, d)
  local q = muldiv(a, b, d)
  local h, l = mul(a, b)
  local qh, ql = mul(q, d)
  if lt(qh, ql, h, l) then q = q + 1 end
  return q
end
`

// luaArgTime takes now (and its window's start) from the arguments.
const luaArgTime = `
local s, ns = tonumber(ARGV[1]), tonumber(ARGV[2])
local function nowwindow() return tonumber(ARGV[4]), tonumber(ARGV[5]) end
`

// luaServerTime reads Redis's TIME (microseconds). Before Redis 5 a script
// that writes after a non-deterministic command must switch to effects
// replication first; from Redis 5 that is the default and from 7 the call is
// a no-op.
const luaServerTime = `
if redis.replicate_commands then redis.replicate_commands() end
local tm = redis.call('TIME')
local s, ns = tonumber(tm[1]), tonumber(tm[2]) * 1000
-- the start of now's window, aligned on the Unix epoch: (s*1e9 + ns) mod W
-- with (a*b) mod W done by doubling, so that nothing passes 2^52.
local function nowwindow()
  local function smod(a) return a - fdiv(a, W) * W end
  local a, b, r = smod(s), smod(E9), 0
  while b > 0 do
    local half = math.floor(b / 2)
    if b - 2 * half == 1 then
      r = r + a
      if r >= W then r = r - W end
    end
    a = a + a
    if a >= W then a = a - W end
    b = half
  end
  return add(s, ns, -smod(r + ns))
end
`

// luaGCRA: constants T (ns per unit), lim = B*T, burst = B. State: the TAT.
const luaGCRA = `
local base = 0
local st = redis.call('GET', KEYS[1])
if st then
  local i = string.find(st, ':', 1, true)
  local d = (tonumber(string.sub(st, 1, i - 1)) - s) * E9 + (tonumber(string.sub(st, i + 1)) - ns)
  if d > 0 then base = d end
end
local room = lim - base
if room < 0 then room = 0 end
if cost > burst then return {0, fdiv(room, T), -1, base} end
local nxt = base + cost * T
if nxt > lim then return {0, fdiv(room, T), nxt - lim, base} end
local x = ns + nxt
local c = fdiv(x, E9)
redis.call('SET', KEYS[1], string.format('%d:%d', s + c, x - c * E9), 'PX', math.ceil(nxt / 1000000) + slack)
return {1, fdiv(lim - nxt, T), 0, nxt}
`

// luaTokenBucket: constants T, cap = B*T, burst = B. State: the instant the
// bucket would be empty.
const luaTokenBucket = `
local have = cap
local st = redis.call('GET', KEYS[1])
if st then
  local i = string.find(st, ':', 1, true)
  local d = (tonumber(string.sub(st, 1, i - 1)) - s) * E9 + (tonumber(string.sub(st, i + 1)) - ns)
  if d > -cap then have = -d end
end
local held = have
if held < 0 then held = 0 end
if cost > burst then return {0, fdiv(held, T), -1, cap - have} end
local need = cost * T
if have < need then return {0, fdiv(held, T), need - have, cap - have} end
local left = have - need
local x = ns - left
local c = fdiv(x, E9)
redis.call('SET', KEYS[1], string.format('%d:%d', s + c, x - c * E9), 'PX', math.ceil((cap - left) / 1000000) + slack)
return {1, fdiv(left, T), 0, cap - left}
`

// luaFixedWindow: constants W, L. State: "start_s:start_ns:count" of the
// latest window seen.
const luaFixedWindow = `
local ws, wns = nowwindow()
local count, moved = 0, true
local st = redis.call('GET', KEYS[1])
if st then
  local f = fields(st)
  if not lt(f[1], f[2], ws, wns) then
    ws, wns, count, moved = f[1], f[2], f[3], false
  end
end
local finish = diff(ws, wns, s, ns) + W
if cost > L - count then
  if moved then
    redis.call('SET', KEYS[1], string.format('%d:%d:0', ws, wns), 'PX', ttl(finish))
  end
  local retry, reset = -1, 0
  if cost <= L then retry = finish end
  if count > 0 then reset = finish end
  return {0, L - count, retry, reset}
end
count = count + cost
redis.call('SET', KEYS[1], string.format('%d:%d:%d', ws, wns, count), 'PX', ttl(finish))
return {1, L - count, 0, finish}
`

// luaSlidingLog: constants W, L. KEYS[1] is a hash (latest instant
// ls/lns, score base bs/bns, live cost sum, member sequence seq), KEYS[2]
// the log: one member "seq:cost" per admit, scored by its instant minus the
// base. The base is moved to the latest instant when the log is empty, and
// the scores rewritten when they would pass 2^52 (once per 52 days of
// continuous traffic), so that scores stay exact.
const luaSlidingLog = `
local m = redis.call('HMGET', KEYS[1], 'ls', 'lns', 'bs', 'bns', 'sum', 'seq')
local ts, tns = s, ns
local bs, bns, sum, seq = s, ns, 0, 0
if m[1] then
  local ls, lns = tonumber(m[1]), tonumber(m[2])
  if lt(s, ns, ls, lns) then ts, tns = ls, lns end
  bs, bns, sum, seq = tonumber(m[3]), tonumber(m[4]), tonumber(m[5]), tonumber(m[6])
end
local function costof(member) return tonumber(string.match(member, ':(%d+)$')) end
if sum > 0 then
  local cut = string.format('%d', diff(ts, tns, bs, bns) - W)
  local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', cut)
  if #gone > 0 then
    for i = 1, #gone do sum = sum - costof(gone[i]) end
    redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', cut)
  end
end
if sum == 0 then
  bs, bns, seq = ts, tns, 0
elseif diff(ts, tns, bs, bns) > 4503599627370496 then
  local shift = diff(ts, tns, bs, bns)
  local es = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
  for i = 1, #es, 2 do
    redis.call('ZADD', KEYS[2], 'XX', string.format('%d', tonumber(es[i + 1]) - shift), es[i])
  end
  bs, bns = ts, tns
end
local trel = diff(ts, tns, bs, bns)
local nrel = diff(s, ns, bs, bns)
local result
if cost > L - sum then
  local retry, reset = -1, 0
  if cost <= L then
    local need = sum + cost - L
    local es = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
    for i = 1, #es, 2 do
      need = need - costof(es[i])
      if need <= 0 then
        retry = tonumber(es[i + 1]) + W - nrel
        break
      end
    end
  end
  if sum > 0 then
    local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
    reset = tonumber(last[2]) + W - nrel
  end
  result = {0, L - sum, retry, reset}
else
  seq = seq + 1
  redis.call('ZADD', KEYS[2], string.format('%d', trel), string.format('%d:%d', seq, cost))
  sum = sum + cost
  result = {1, L - sum, 0, trel - nrel + W}
end
redis.call('HSET', KEYS[1], 'ls', string.format('%d', ts), 'lns', string.format('%d', tns), 'bs', string.format('%d', bs),
  'bns', string.format('%d', bns), 'sum', string.format('%d', sum), 'seq', string.format('%d', seq))
redis.call('PEXPIRE', KEYS[1], ttl(W))
if sum > 0 then redis.call('PEXPIRE', KEYS[2], ttl(W)) end
return result
`

// luaSlidingCounter: constants W, L. State:
// "start_s:start_ns:prev:curr:latest_s:latest_ns".
const luaSlidingCounter = `
local ss, sns, prev, curr, ls, lns
local changed = false
local st = redis.call('GET', KEYS[1])
if st then
  local f = fields(st)
  ss, sns, prev, curr, ls, lns = f[1], f[2], f[3], f[4], f[5], f[6]
  if lt(ls, lns, s, ns) then
    ls, lns, changed = s, ns, true
    local ws, wns = nowwindow()
    if lt(ss, sns, ws, wns) then
      local es, ens = add(ss, sns, W)
      if es == ws and ens == wns then prev = curr else prev = 0 end
      ss, sns, curr = ws, wns, 0
    end
  end
else
  ss, sns = nowwindow()
  prev, curr, ls, lns, changed = 0, 0, s, ns, true
end
local weight = diff(ss, sns, ls, lns) + W
local srel = diff(ss, sns, s, ns)
local function remaining()
  local r = L - curr - muldivceil(prev, weight, W)
  if r < 0 then r = 0 end
  return r
end
local function save()
  redis.call('SET', KEYS[1], string.format('%d:%d:%d:%d:%d:%d', ss, sns, prev, curr, ls, lns), 'PX', ttl(weight + W))
end
if cost <= L - curr and not mulless(L - curr - cost, W, prev, weight) then
  curr = curr + cost
  save()
  return {1, remaining(), 0, srel + 2 * W}
end
if changed then save() end
local retry, reset = -1, 0
if cost <= L then
  local room = L - curr - cost
  if room >= 0 then
    retry = srel + W - muldiv(room, W, prev)
  else
    retry = srel + 2 * W - muldiv(L - cost, W, curr)
  end
end
if curr > 0 then reset = srel + 2 * W elseif prev > 0 then reset = srel + W end
return {0, remaining(), retry, reset}
`

// algorithm describes one script: its body, whether it needs the wide
// arithmetic, and the names of its constants.
type algorithm struct {
	body    string
	wide    bool
	consts  []string
	helpers []string // names in helpers
}

var (
	bucketHelpers      = []string{"fdiv"}
	windowHelpers      = []string{"fdiv", "diff", "add", "lt", "fields", "ttl"}
	gcraAlgo           = algorithm{body: luaGCRA, consts: []string{"T", "lim", "burst"}, helpers: bucketHelpers}
	tokenBucketAlgo    = algorithm{body: luaTokenBucket, consts: []string{"T", "cap", "burst"}, helpers: bucketHelpers}
	fixedWindowAlgo    = algorithm{body: luaFixedWindow, consts: []string{"W", "L"}, helpers: windowHelpers}
	slidingLogAlgo     = algorithm{body: luaSlidingLog, consts: []string{"W", "L"}, helpers: windowHelpers}
	slidingCounterAlgo = algorithm{body: luaSlidingCounter, wide: true, consts: []string{"W", "L"}, helpers: windowHelpers}
)

// source returns the script of a with its constants' values (and the TTL
// slack in ms), reading the time from the arguments or from TIME. The
// server-time window start needs W, which every window algorithm has.
func (a algorithm) source(values []int64, slack int64, serverTime bool) string {
	var b strings.Builder
	b.WriteString("local slack")
	for _, c := range a.consts {
		b.WriteString(", " + c)
	}
	b.WriteString(" = " + strconv.FormatInt(slack, 10))
	for _, v := range values {
		b.WriteString(", " + strconv.FormatInt(v, 10))
	}
	b.WriteString("\n")
	b.WriteString(luaCore)
	need := a.helpers
	if serverTime {
		need = append(need[:len(need):len(need)], "fdiv", "add") // the window start
	}
	for _, h := range helpers {
		if slices.Contains(need, h.name) {
			b.WriteString(h.code)
			b.WriteString("\n")
		}
	}
	if a.wide {
		b.WriteString(luaWide)
	}
	if serverTime {
		b.WriteString(luaServerTime)
	} else {
		b.WriteString(luaArgTime)
	}
	b.WriteString(a.body)
	return b.String()
}

// scripts caches one *goredis.Script per source, so that limiters with the
// same policy share it (and its SHA-1).
var scripts sync.Map // string -> *goredis.Script

func scriptFor(src string) *goredis.Script {
	if s, ok := scripts.Load(src); ok {
		return s.(*goredis.Script)
	}
	s, _ := scripts.LoadOrStore(src, goredis.NewScript(src))
	return s.(*goredis.Script)
}
