package redis

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	goredis "github.com/redis/go-redis/v9"
)

// A limiter's script decides a batch of N decisions, in order, in one call
// (N is 1 without a Batcher): it is a line of constants (the policy in ns
// and cost units, and the TTL slack in ms, so that they are not sent with
// every call), the helpers it uses, the lines that read the time, the
// algorithm's decide function and a driver that runs it on every decision.
// Arguments, per decision i (1-based), k keys and a arguments each:
//
//	KEYS[k*(i-1)+1]  the state key, "{prefix:key}"; the sliding log also
//	                 takes "{prefix:key}:log" after it (k = 2; same hash
//	                 tag, same Cluster slot). Every key of one call is in
//	                 one Cluster slot: the Batcher groups them so.
//	ARGV[a*(i-1)+1]  now, whole seconds since the clock's zero (floor)
//	ARGV[a*(i-1)+2]  now, the nanoseconds past it, in [0, 1e9)
//	ARGV[a*(i-1)+3]  cost, clamped to capacity+1 (anything above the
//	                 capacity is rejected with RetryAfter Never, whatever
//	                 its size)
//	ARGV[a*(i-1)+4]  the start of now's aligned window, seconds (fixed
//	                 window and sliding counter: a = 5; else a = 3)
//	ARGV[a*(i-1)+5]  the same, nanoseconds
//
// Server-time scripts take only the cost (a = 1) and read TIME once per
// call: the decisions of one batch share that instant, as decisions made
// within the same microsecond would.
//
// The reply is flat, the same few numbers per decision (algorithm.width),
// in order: what the caller cannot know (the state's TAT, count, window
// start, ...), with admitted or rejected in its sign; the caller derives
// Remaining, RetryAfter and ResetAfter from them (decode.go), so that the
// divisions, and the sliding counter's 128-bit quotients, cost Redis
// nothing.
//
// Cost. Redis runs one script at a time, and a call has a fixed price
// (argument tables, the Lua call, the reply) that a batch pays once; each
// redis.call costs a command's dispatch and a RESP round trip inside the
// server. So the driver reads every state key of the batch with one MGET
// and writes each key it changed once, at the end, with its last state and
// TTL (what the same decisions made one by one would leave); decide works on
// the state alone. A state key holds one string (one GET or SET, one TTL);
// only the sliding log needs a second key, its sorted set. The string is
// integers, each a little-endian int64, packed and unpacked with Redis's
// struct library: parsing decimal text (string.match, tonumber) and
// formatting it (string.format) cost more than the rest of a GCRA decision.
// A state of another length (another version's) is ignored as absent.
//
// Lua numbers in Redis are doubles: integers are exact up to 2^53 (104 days
// in ns), and an instant of a 100-year run is not. So instants travel and
// are stored as two exact integers, seconds and nanoseconds (s, ns), and
// arithmetic is done on differences, which the policy bounds (every span the
// scripts compute is at most 2^52 ns: see maxSpan). A difference between two
// instants further apart than 2^53 ns is inexact, but then it only decides
// "long ago" or "far ahead", never a threshold. Products of two spans (the
// sliding counter's weighted estimate) are computed exactly in two 52-bit
// limbs. Server-time scripts read TIME instead of the instants and compute
// the window start themselves.

// helpers are the Lua functions the scripts share, in dependency order:
// exact integer helpers on doubles. A script defines only those it uses
// (each definition costs a closure per call).
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
}

// luaExpiry keeps TTLs: expiry(e, span) returns the expiry a key whose state
// matters for span ns more must have, in ms on Redis's clock (R, read once
// per call), given its expiry e (0: none), and whether it moved. The
// expiry is kept while it covers span plus half the slack; else it moves to
// the longest span this state can matter plus the slack, so that a busy key
// renews its TTL about once per half slack, and every other write keeps it
// (SET ... KEEPTTL), which costs Redis less than setting it.
const luaExpiry = `
local function expiry(e, span)
  if not R then
    local t = redis.call('TIME')
    R = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  local ms = math.ceil(span / 1000000)
  if e >= R + ms + half then return e, false end
  if ms < longest then ms = longest end
  return R + ms + slack, true
end
`

// luaCore opens every script: the per-decision inputs, which the driver
// sets before each decide, the reply, and Redis's clock in ms (R), read
// once per call. Every script reads TIME (for TTLs) and then writes: before
// Redis 5 a script must switch to effects replication first; from Redis 5
// that is the default and from 7 the call is a no-op. Numbers passed to
// redis.call are integers below 2^53, which Redis writes exactly.
const luaCore = `
if redis.replicate_commands then redis.replicate_commands() end
local E9 = 1000000000
local s, ns, cost, ws, wns = 0, 0, 0, 0, 0
local out = {}
local R
`

// luaWide is exact arithmetic on products of two spans (the sliding
// counter's weighted estimate), in two 52-bit limbs: only the comparison
// the admission needs; the quotients are Go's (decode.go).
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
`

// luaServerTime reads Redis's TIME (microseconds) once for the batch, and
// the start of its window when the algorithm has windows.
const luaServerTime = `
local tm = redis.call('TIME')
s, ns = tonumber(tm[1]), tonumber(tm[2]) * 1000
R = s * 1000 + math.floor(ns / 1000000)
`

// luaServerWindow is the start of now's window, aligned on the Unix epoch:
// (s*1e9 + ns) mod W with (a*b) mod W done by doubling, so that nothing
// passes 2^52.
const luaServerWindow = `
do
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
  ws, wns = add(s, ns, -smod(r + ns))
end
`

// luaGCRA: constants T (ns per unit), lim = B*T, burst = B. State: the TAT
// (s, ns) and the key's expiry e. Reply: nxt (the TAT after the admit, minus now; >= T) when
// admitted, else -base-1 (base: the TAT minus now, at least 0); the caller
// derives the rest (decodeGCRA).
const luaGCRA = `
local function decide(st, o)
  local base, e = 0, 0
  if st and #st == 24 then
    local a, b
    a, b, e = struct.unpack('<i8i8i8', st)
    local d = (a - s) * E9 + (b - ns)
    if d > 0 then base = d end
  end
  local nxt = base + cost * T
  if cost > burst or nxt > lim then
    out[o + 1] = -base - 1
    return
  end
  out[o + 1] = nxt
  local x = ns + nxt
  local c = fdiv(x, E9)
  local moved
  e, moved = expiry(e, nxt)
  return struct.pack('<i8i8i8', s + c, x - c * E9, e), e, moved
end
`

// luaTokenBucket: constants T, cap = B*T, burst = B. State: the instant the
// bucket would be empty (s, ns) and e. Reply: left (what the bucket holds after
// the admit, in ns of refill; >= 0) when admitted, else have-cap-1 (have:
// what it holds, negative while in debt).
const luaTokenBucket = `
local function decide(st, o)
  local have, e = cap, 0
  if st and #st == 24 then
    local a, b
    a, b, e = struct.unpack('<i8i8i8', st)
    local d = (a - s) * E9 + (b - ns)
    if d > -cap then have = -d end
  end
  if cost > burst or have < cost * T then
    out[o + 1] = have - cap - 1
    return
  end
  local left = have - cost * T
  out[o + 1] = left
  local x = ns - left
  local c = fdiv(x, E9)
  local moved
  e, moved = expiry(e, cap - left)
  return struct.pack('<i8i8i8', s + c, x - c * E9, e), e, moved
end
`

// luaFixedWindow: constants W, L. State: the latest window seen (start s,
// ns, count) and e. Reply: the count after the admit when admitted, else
// -count-1; then the time until that window's end.
const luaFixedWindow = `
local function decide(st, o)
  local fs, fns, count, moved, e = ws, wns, 0, true, 0
  if st and #st == 32 then
    local a, b, c
    a, b, c, e = struct.unpack('<i8i8i8i8', st)
    if not lt(a, b, ws, wns) then
      fs, fns, count, moved = a, b, c, false
    end
  end
  local finish = diff(fs, fns, s, ns) + W
  out[o + 2] = finish
  if cost > L - count then
    out[o + 1] = -count - 1
    if moved then
      local mv
      e, mv = expiry(e, finish)
      return struct.pack('<i8i8i8i8', fs, fns, 0, e), e, mv
    end
    return
  end
  count = count + cost
  out[o + 1] = count
  local mv
  e, mv = expiry(e, finish)
  return struct.pack('<i8i8i8i8', fs, fns, count, e), e, mv
end
`

// luaSlidingCounter: constants W, L. State: the current window's start (s,
// ns), prev, curr, the latest instant seen (s, ns) and e. Only the admission needs
// the exact product comparison; the reply carries what the caller needs for
// the rest (remaining and retry-after are quotients of such products, which
// Go computes in 128 bits): curr (after the admit) when admitted, else
// -curr-1; prev; the window's start minus now; and the weight span (the
// window's start minus the latest instant, plus W).
const luaSlidingCounter = `
local function decide(st, o)
  local ss, sns, prev, curr, ls, lns
  local changed, e = false, 0
  if st and #st == 56 then
    ss, sns, prev, curr, ls, lns, e = struct.unpack('<i8i8i8i8i8i8i8', st)
    if lt(ls, lns, s, ns) then
      ls, lns, changed = s, ns, true
      if lt(ss, sns, ws, wns) then
        local es, ens = add(ss, sns, W)
        if es == ws and ens == wns then prev = curr else prev = 0 end
        ss, sns, curr = ws, wns, 0
      end
    end
  else
    ss, sns = ws, wns
    prev, curr, ls, lns, changed = 0, 0, s, ns, true
  end
  local weight = diff(ss, sns, ls, lns) + W
  out[o + 2], out[o + 3], out[o + 4] = prev, diff(ss, sns, s, ns), weight
  if cost <= L - curr and not mulless(L - curr - cost, W, prev, weight) then
    curr = curr + cost
    out[o + 1] = curr
  else
    out[o + 1] = -curr - 1
    if not changed then return end
  end
  local moved
  e, moved = expiry(e, weight + W)
  return struct.pack('<i8i8i8i8i8i8i8', ss, sns, prev, curr, ls, lns, e), e, moved
end
`

// luaSlidingLog: constants W, L. The state key holds (bs, bns, lrel, sum,
// seq, last, big, e): the score base (an instant), the latest
// instant seen minus the base, the live cost sum, the member sequence, the
// newest member's score, the number of live members of cost above 1, and
// the key's expiry; the log key is a sorted set, one member per admit,
// "seq:cost" (just seq for a cost of 1), scored by its instant minus the
// base. The base is moved to the latest instant when the log is empty, and
// the scores rewritten when they would pass 2^52 (once per 52 days of
// continuous traffic), so that scores stay exact. What the state keeps
// spares reads of the log: expiry needs no read when every live member
// costs 1 (the count removed is the cost) nor when the newest has expired
// (all have); a rejection reads only the members that must expire before it
// passes (at most need of them; exactly one when all cost 1), and its reset
// comes from the newest member's score.
const luaSlidingLog = `
local function costof(member)
  local c = string.match(member, ':(%d+)$')
  if c then return tonumber(c) end
  return 1
end
-- recount returns what the log itself holds: the cost sum, the members of
-- cost above 1, the highest sequence number and the newest score.
local function recount(lk, seq)
  local es = redis.call('ZRANGE', lk, 0, -1, 'WITHSCORES')
  local sum, big, last = 0, 0, 0
  for i = 1, #es, 2 do
    local c = costof(es[i])
    sum = sum + c
    if c > 1 then big = big + 1 end
    local q = tonumber(string.match(es[i], '^(%d+)'))
    if q > seq then seq = q end
    last = tonumber(es[i + 1])
  end
  return sum, big, seq, last
end
-- waitfor returns the score at which the log will have dropped need cost
-- units, or nil when it holds less than that.
local function waitfor(lk, need, big)
  if big == 0 then
    local m = redis.call('ZRANGE', lk, need - 1, need - 1, 'WITHSCORES')
    if m[2] then return tonumber(m[2]) end
    return nil
  end
  local es = redis.call('ZRANGE', lk, 0, need - 1, 'WITHSCORES')
  for i = 1, #es, 2 do
    need = need - costof(es[i])
    if need <= 0 then return tonumber(es[i + 1]) end
  end
  return nil
end
local function decide(st, lk, o)
  local bs, bns, lrel, sum, seq, last, big, e = s, ns, 0, 0, 0, 0, 0, 0
  if st and #st == 64 then
    bs, bns, lrel, sum, seq, last, big, e = struct.unpack('<i8i8i8i8i8i8i8i8', st)
  else
    -- No state (new, evicted, or another version's): a log left behind
    -- would be counted against a sum that never held it.
    redis.call('DEL', lk)
  end
  -- trel: the latest instant (now, unless the clock went back) minus the
  -- base; exact, since the latest instant was never more than 2^52 ns past
  -- the base, or is now itself.
  local nrel = diff(s, ns, bs, bns)
  local trel, latest = nrel, true
  if nrel < lrel then trel, latest = lrel, false end
  local made = false
  if sum > 0 then
    local cut = trel - W
    if last <= cut then
      redis.call('DEL', lk)
      sum, big = 0, 0
    elseif big == 0 then
      sum = sum - redis.call('ZREMRANGEBYSCORE', lk, '-inf', cut)
    else
      local gone = redis.call('ZRANGEBYSCORE', lk, '-inf', cut)
      if #gone > 0 then
        for i = 1, #gone do
          local c = costof(gone[i])
          sum = sum - c
          if c > 1 then big = big - 1 end
        end
        redis.call('ZREMRANGEBYSCORE', lk, '-inf', cut)
      end
    end
  end
  if sum == 0 or trel > 4503599627370496 then
    if sum > 0 then
      local es = redis.call('ZRANGE', lk, 0, -1, 'WITHSCORES')
      for i = 1, #es, 2 do
        redis.call('ZADD', lk, 'XX', tonumber(es[i + 1]) - trel, es[i])
      end
      last = last - trel
    else
      seq = 0
    end
    if latest then bs, bns = s, ns else bs, bns = add(bs, bns, trel) end
    trel = 0
    nrel = diff(s, ns, bs, bns)
  end
  local at
  if cost > L - sum and cost <= L then
    at = waitfor(lk, sum + cost - L, big)
    if not at then
      -- The log holds less than the state counts: it was evicted or
      -- deleted apart from it. Count what it holds, and decide on that.
      sum, big, seq, last = recount(lk, seq)
      if cost > L - sum then at = waitfor(lk, sum + cost - L, big) end
    end
  end
  if cost > L - sum then
    local retry, reset = -1, 0
    if at then retry = at + W - nrel end
    if sum > 0 then reset = last + W - nrel end
    out[o + 1], out[o + 2], out[o + 3] = -sum - 1, retry, reset
  else
    seq = seq + 1
    made = sum == 0
    if cost == 1 then
      redis.call('ZADD', lk, trel, seq)
    else
      redis.call('ZADD', lk, trel, string.format('%d:%d', seq, cost))
      big = big + 1
    end
    sum, last = sum + cost, trel
    out[o + 1], out[o + 2], out[o + 3] = sum, 0, trel - nrel + W
  end
  local moved
  e, moved = expiry(e, W)
  return struct.pack('<i8i8i8i8i8i8i8i8', bs, bns, trel, sum, seq, last, big, e), e, moved, sum > 0, made
end
`

// luaDriver decides every decision of the call in order (one state key
// each), reading the states with one MGET and writing each changed key once.
// decide(st, o) writes the decision's reply at out[o+1...] and, when it
// writes, returns the new state, which ends with the key's expiry (see
// luaExpiry), that expiry, and whether it moved (then the write sets it:
// ren). cur holds each key's state as the batch changed it (false: none),
// so that a key asked twice sees its first decision.
const luaDriver = `
local got = redis.call('MGET', unpack(KEYS))
local cur, ren, order = {}, {}, {}
for i = 1, #KEYS do
%s  local k = KEYS[i]
  local st = cur[k]
  if st == nil then st = got[i] end
  local nst, e, moved = decide(st, %d * (i - 1))
  if nst then
    if ren[k] == nil then
      ren[k] = false
      order[#order + 1] = k
    end
    if moved then ren[k] = e end
    st = nst
  end
  cur[k] = st
end
for j = 1, #order do
  local k = order[j]
  if ren[k] then
    redis.call('SET', k, cur[k], 'PX', ren[k] - R)
  else
    redis.call('SET', k, cur[k], 'KEEPTTL')
  end
end
return out
`

// luaLogDriver is luaDriver for the sliding log: two keys per decision, and
// every decision writes its state (the latest instant moves). The log
// expires with the state: its TTL is set when the state's moves, or when it
// is created again (it vanishes when its last member goes).
const luaLogDriver = `
local n = #KEYS / 2
local sk = {}
for i = 1, n do sk[i] = KEYS[2 * i - 1] end
local got = redis.call('MGET', unpack(sk))
local cur, logs, live, ren, made, exp, order = {}, {}, {}, {}, {}, {}, {}
for i = 1, n do
%s  local k = sk[i]
  local st = cur[k]
  if st == nil then
    st = got[i]
    order[#order + 1] = k
    ren[k] = false
  end
  local nst, e, moved, l, m = decide(st, KEYS[2 * i], %d * (i - 1))
  if moved then ren[k] = true end
  if m then made[k] = true end
  cur[k], logs[k], live[k], exp[k] = nst, KEYS[2 * i], l, e
end
for j = 1, #order do
  local k = order[j]
  if ren[k] then
    redis.call('SET', k, cur[k], 'PX', exp[k] - R)
  else
    redis.call('SET', k, cur[k], 'KEEPTTL')
  end
  if live[k] and (ren[k] or made[k]) then redis.call('PEXPIRE', logs[k], exp[k] - R) end
end
return out
`

// algorithm describes one script: its decide function, whether it needs
// the wide arithmetic and the window start, whether it keeps a log key, and
// the names of its constants.
type algorithm struct {
	body     string
	wide     bool
	windowed bool // takes the start of now's window
	log      bool // two keys per decision: luaLogDriver
	width    int  // reply numbers per decision
	consts   []string
	helpers  []string // names in helpers
}

var (
	bucketHelpers      = []string{"fdiv"}
	windowHelpers      = []string{"fdiv", "diff", "add", "lt"}
	gcraAlgo           = algorithm{body: luaGCRA, width: 1, consts: []string{"T", "lim", "burst"}, helpers: bucketHelpers}
	tokenBucketAlgo    = algorithm{body: luaTokenBucket, width: 1, consts: []string{"T", "cap", "burst"}, helpers: bucketHelpers}
	fixedWindowAlgo    = algorithm{body: luaFixedWindow, width: 2, windowed: true, consts: []string{"W", "L"}, helpers: windowHelpers}
	slidingLogAlgo     = algorithm{body: luaSlidingLog, width: 3, log: true, consts: []string{"W", "L"}, helpers: windowHelpers}
	slidingCounterAlgo = algorithm{body: luaSlidingCounter, width: 4, wide: true, windowed: true, consts: []string{"W", "L"}, helpers: windowHelpers}
)

// argsPer is the number of arguments each decision sends.
func (a algorithm) argsPer(serverTime bool) int {
	switch {
	case serverTime:
		return 1
	case a.windowed:
		return 5
	}
	return 3
}

// source returns the script of a with its constants' values (and the TTL
// slack in ms), reading the time from the arguments or from TIME. The
// server-time window start needs W, which every window algorithm has.
func (a algorithm) source(values []int64, slack, longest int64, serverTime bool) string {
	var b strings.Builder
	b.WriteString("local slack, half, longest")
	for _, c := range a.consts {
		b.WriteString(", " + c)
	}
	b.WriteString(" = " + strconv.FormatInt(slack, 10))
	b.WriteString(", " + strconv.FormatInt((slack+1)/2, 10))
	b.WriteString(", " + strconv.FormatInt((longest+999999)/1000000, 10))
	for _, v := range values {
		b.WriteString(", " + strconv.FormatInt(v, 10))
	}
	b.WriteString("\n")
	b.WriteString(luaCore)
	need := a.helpers
	if serverTime && a.windowed {
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
		if a.windowed {
			b.WriteString(luaServerWindow)
		}
	}
	b.WriteString(luaExpiry)
	b.WriteString(a.body)
	// The lines that read decision i's arguments.
	var read string
	switch n := strconv.Itoa(a.argsPer(serverTime)); {
	case serverTime:
		read = "  cost = tonumber(ARGV[i])\n"
	case a.windowed:
		read = "  local j = " + n + " * (i - 1)\n" +
			"  s, ns, cost = tonumber(ARGV[j + 1]), tonumber(ARGV[j + 2]), tonumber(ARGV[j + 3])\n" +
			"  ws, wns = tonumber(ARGV[j + 4]), tonumber(ARGV[j + 5])\n"
	default:
		read = "  local j = " + n + " * (i - 1)\n" +
			"  s, ns, cost = tonumber(ARGV[j + 1]), tonumber(ARGV[j + 2]), tonumber(ARGV[j + 3])\n"
	}
	driver := luaDriver
	if a.log {
		driver = luaLogDriver
	}
	driver = strings.Replace(driver, "%s", read, 1)
	b.WriteString(strings.Replace(driver, "%d", strconv.Itoa(a.width), 1))
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
