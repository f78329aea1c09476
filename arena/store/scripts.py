"""The Lua scripts of the store: each one atomic step over several keys (``arena.store.keys`` names them), with
its KEYS and ARGV in the comment above it. The store modules register them (``client.register_script``)."""

# KEYS: 1 result, 2 match record, 3 ladder zset, 4 results log, 5 tournament hash, 6 ladder stats hash,
#       7 tournament standings hash, 8 game match index, 9 tournament match index, 10 cancelled set,
#       11 failed set, then per seat i (1-based): 10 + 2i bot match index, 11 + 2i name match index, then last
#       (12 + 2n) the game's index sequence: every stored match, rated or not, takes the next number of it as its
#       score in the match indexes, so no two matches share a score (pages resume after a score); it starts above
#       the highest score already in the game's index
# ARGV: 1 result JSON, 2 record JSON, 3 initial rating, 4 seats n, 5 "1" when KEYS[5] is a tournament,
#       6 fault total, 7 now, 8 match id, then per seat (6 each): bot, pre-match rating, delta, score, rank, win 0/1,
#       then (optional, after the seats) "0" for an unrated match: indexed and counted in its tournament only (the
#       ladder, its stats and the results log do not take it); "void" for a match every seat of which failed:
#       indexed and counted in its tournament's progress only (no standings, no ladder); else rated
# Returns 1 stored, 0 already stored (nothing changed), -1 a rating moved since it was read (nothing changed).
RECORD_RESULT = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local n = tonumber(ARGV[4])
local initial = tonumber(ARGV[3])
local flag = ARGV[9 + n * 6]
local rated = flag ~= '0' and flag ~= 'void'
local standing = n  -- seats the tournament's standings count: none of a void match
if flag == 'void' then standing = 0 end
local function arg(i, f) return ARGV[8 + (i - 1) * 6 + f] end
local laddered = {}
if rated then
  for i = 1, n do
    local cur = redis.call('ZSCORE', KEYS[3], arg(i, 1))
    local rating = initial
    if cur then rating = tonumber(cur) end
    if rating ~= tonumber(arg(i, 2)) then return -1 end
    laddered[i] = cur and true or false
  end
end
local mid = ARGV[8]
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
if rated then redis.call('RPUSH', KEYS[4], mid) end
local seq = KEYS[12 + 2 * n]
if redis.call('EXISTS', seq) == 0 then
  local top = redis.call('ZREVRANGE', KEYS[8], 0, 0, 'WITHSCORES')
  local start = redis.call('LLEN', KEYS[4])
  if top[2] and tonumber(top[2]) > start then start = tonumber(top[2]) end
  redis.call('SET', seq, math.floor(start))
end
local pos = redis.call('INCR', seq)
redis.call('ZADD', KEYS[8], pos, mid)
for i = 1, n do
  local bot = arg(i, 1)
  redis.call('ZADD', KEYS[10 + 2 * i], pos, mid)
  redis.call('ZADD', KEYS[11 + 2 * i], pos, mid)
  if rated then
    if not laddered[i] then redis.call('ZADD', KEYS[3], 'NX', ARGV[3], bot) end
    redis.call('ZINCRBY', KEYS[3], arg(i, 3), bot)
    redis.call('HINCRBY', KEYS[6], 'matches:' .. bot, 1)
    if arg(i, 6) ~= '0' then redis.call('HINCRBY', KEYS[6], 'wins:' .. bot, arg(i, 6)) end
    redis.call('HINCRBYFLOAT', KEYS[6], 'score_sum:' .. bot, arg(i, 4))
  end
end
if ARGV[5] == '1' and redis.call('EXISTS', KEYS[5]) == 1 then
  redis.call('ZADD', KEYS[9], pos, mid)
  redis.call('SREM', KEYS[10], mid)
  redis.call('SREM', KEYS[11], mid)
  local done = redis.call('HINCRBY', KEYS[5], 'matches_done', 1)
  redis.call('HINCRBY', KEYS[5], 'faults', ARGV[6])
  for i = 1, standing do
    local bot = arg(i, 1)
    local rank = tonumber(arg(i, 5))
    local wins, half, losses = 0, 0, 0
    redis.call('HINCRBY', KEYS[7], 'matches:' .. bot, 1)
    redis.call('HINCRBYFLOAT', KEYS[7], 'score_sum:' .. bot, arg(i, 4))
    redis.call('HINCRBY', KEYS[7], 'pairs:' .. bot, n - 1)
    for j = 1, n do
      if j ~= i then
        local other = tonumber(arg(j, 5))
        redis.call('HINCRBY', KEYS[7], 'vs:' .. bot .. '|' .. arg(j, 1), 1)
        if rank < other then
          wins = wins + 1
          half = half + 2
        elseif rank == other then
          half = half + 1
        else
          losses = losses + 1
        end
      end
    end
    if wins > 0 then redis.call('HINCRBY', KEYS[7], 'wins:' .. bot, wins) end
    if half > 0 then redis.call('HINCRBY', KEYS[7], 'half_points:' .. bot, half) end
    if losses > 0 then redis.call('HINCRBY', KEYS[7], 'losses:' .. bot, losses) end
  end
  local total = tonumber(redis.call('HGET', KEYS[5], 'matches_total'))
  local settled = done + redis.call('SCARD', KEYS[10]) + redis.call('SCARD', KEYS[11])
  if total and settled >= total and redis.call('HGET', KEYS[5], 'state') == 'running'
      and redis.call('HGET', KEYS[5], 'controlled') ~= '1' then
    redis.call('HSET', KEYS[5], 'state', 'finished', 'finished_at', ARGV[7])
  end
end
return 1
"""

# Settle a job without running it: acknowledge and delete it; when it was still pending and its result is not
# stored, add its match id to the cancelled set (ARGV[5] "cancelled") or the failed set ("failed") and finish a
# running tournament when nothing is left to run (done + cancelled + failed = total).
# KEYS: 1 jobs stream, 2 result, 3 tournament hash, 4 cancelled set, 5 failed set
# ARGV: 1 group, 2 entry id, 3 match id, 4 now, 5 "cancelled" | "failed" | "" (only acknowledge)
# Returns 0 the job was not pending (settled before), 2 its result is stored, 1 settled now.
DROP_JOB = """
local acked = redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
if acked == 0 then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 2 end
if ARGV[5] ~= '' and redis.call('EXISTS', KEYS[3]) == 1 then
  if ARGV[5] == 'cancelled' then redis.call('SADD', KEYS[4], ARGV[3]) else redis.call('SADD', KEYS[5], ARGV[3]) end
  local total = tonumber(redis.call('HGET', KEYS[3], 'matches_total'))
  local done = tonumber(redis.call('HGET', KEYS[3], 'matches_done'))
  if total and done and done + redis.call('SCARD', KEYS[4]) + redis.call('SCARD', KEYS[5]) >= total
      and redis.call('HGET', KEYS[3], 'state') == 'running' and redis.call('HGET', KEYS[3], 'controlled') ~= '1' then
    redis.call('HSET', KEYS[3], 'state', 'finished', 'finished_at', ARGV[4])
  end
end
return 1
"""

# Bot health after one stored match (``HealthStore.record_match_health``): a bot that played its match ("ok")
# has its run of failures reset, and is healthy again if it was not, unless it is unhealthy for answering GetInfo
# "not as registered: ...", ``MISMATCH_PREFIX``, which only the GetInfo check clears, or the match started before it
# became unhealthy (now minus the match's length, ARGV[4] s; '' unknown: any match): a match it played through
# before it died, stored after the matches that failed since, says nothing of it now; a failed match ("fail")
# counts once per match id, and the ARGV[1]-th failure in a row marks the bot unhealthy (since now, with the
# reason). The match's start is taken on the server's clock (now minus its length), so workers' clocks never count.
# KEYS: 1 unhealthy zset, then one health hash per bot. ARGV: 1 failures that make a bot unhealthy, 2 now (s since
# the epoch; '' for the server's clock, which every worker shares: the deferral cap counts from it), 3 match id, 4
# the match's length (s, measured by its worker; ''), then per bot (3 each): bot id, "ok" | "fail", reason.
# Returns per bot: 0 nothing new, 1 unhealthy now, 2 healthy again, -1 this match was counted before.
RECORD_HEALTH = """
local out = {}
local threshold = tonumber(ARGV[1])
local now = ARGV[2]
if now == '' then
  local t = redis.call('TIME')
  now = string.format('%.6f', tonumber(t[1]) + tonumber(t[2]) / 1000000)
end
local length = tonumber(ARGV[4])
local started = length and tonumber(now) - length
for i = 2, #KEYS do
  local h = KEYS[i]
  local base = 4 + (i - 2) * 3
  local bot, outcome, reason = ARGV[base + 1], ARGV[base + 2], ARGV[base + 3]
  local status = 0
  if outcome == 'ok' then
    if redis.call('EXISTS', h) == 1 then
      redis.call('HSET', h, 'failures', 0)
      local why = redis.call('HGET', h, 'reason') or ''
      local since = tonumber(redis.call('HGET', h, 'since') or '')
      -- "not as registered" clears only when GetInfo answers as registered again (MARK_HEALTHY), not when a match
      -- that started before it was found is played through
      if redis.call('HGET', h, 'state') == 'unhealthy' and string.sub(why, 1, 19) ~= 'not as registered: '
          and not (started and since and started < since) then
        redis.call('HSET', h, 'state', 'healthy', 'recovered_at', now)
        redis.call('ZREM', KEYS[1], bot)
        status = 2
      end
    end
  elseif redis.call('HGET', h, 'failed_match') == ARGV[3] then
    status = -1
  else
    local n = redis.call('HINCRBY', h, 'failures', 1)
    redis.call('HSET', h, 'failed_match', ARGV[3], 'last_failure', reason, 'last_failure_at', now)
    if n >= threshold and redis.call('HGET', h, 'state') ~= 'unhealthy' then
      redis.call('HSET', h, 'state', 'unhealthy', 'since', now, 'reason', reason)
      redis.call('ZADD', KEYS[1], now, bot)
      status = 1
    end
  end
  table.insert(out, status)
end
return out
"""

# An unhealthy bot answered GetInfo again: healthy, its run of failures reset.
# KEYS: 1 unhealthy zset, 2 health hash. ARGV: 1 bot id, 2 now. Returns 1 healthy again, 0 it was not unhealthy.
MARK_HEALTHY = """
redis.call('ZREM', KEYS[1], ARGV[1])
if redis.call('HGET', KEYS[2], 'state') ~= 'unhealthy' then return 0 end
redis.call('HSET', KEYS[2], 'state', 'healthy', 'failures', 0, 'recovered_at', ARGV[2])
return 1
"""

# A lock held by a token (``arena.ladder.cache``): extend it (RENEW_LOCK, ARGV[2] ms) or delete it (DROP_LOCK)
# only while it is still the caller's. KEYS: 1 lock. ARGV: 1 token, 2 ms. Returns 1 done, 0 not the caller's lock.
RENEW_LOCK = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""
DROP_LOCK = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
"""

# Write a value only while the caller holds a lock (a refresh that lost its lock, or whose Redis was emptied,
# writes nothing). KEYS: 1 lock, 2 key to set. ARGV: 1 token, 2 value. Returns 1 written, 0 not the caller's lock.
SET_IF_LOCKED = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
return 1
"""

# Defer a claimed job (a seat's bot is unhealthy): acknowledge and delete it from the stream and, unless its
# result is stored, park its fields under its match id (first deferral time kept as the score), in one step, so the
# job is never both queued and parked, nor lost.
# KEYS: 1 jobs stream, 2 result, 3 deferred zset, 4 deferred-jobs hash
# ARGV: 1 group, 2 entry id, 3 match id, 4 fields (JSON list), 5 first deferral time
# Returns 0 the job was not pending (settled before), 2 its result is stored, 1 deferred now.
DEFER_JOB = """
local acked = redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
if acked == 0 then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 2 end
redis.call('ZADD', KEYS[3], 'NX', ARGV[5], ARGV[3])
redis.call('HSET', KEYS[4], ARGV[3], ARGV[4])
return 1
"""

# Queue a deferred match again (a new entry on its game's jobs stream, with the field forced=1 when ARGV[2] is
# "1": played whatever the health of its bots), in one step with removing it from the deferred set.
# KEYS: 1 deferred zset, 2 deferred-jobs hash, 3 jobs stream. ARGV: 1 match id, 2 "1" forced | "0".
# Returns 1 queued, 0 it was not deferred (released by another worker).
RELEASE_DEFERRED = """
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end
local raw = redis.call('HGET', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
if not raw then return 0 end
local fields = cjson.decode(raw)
if ARGV[2] == '1' then
  table.insert(fields, 'forced')
  table.insert(fields, '1')
end
redis.call('XADD', KEYS[3], '*', unpack(fields))
return 1
"""

# Cancel a running tournament and drop its jobs that no worker has received yet (entries after the group's
# last-delivered id); jobs already delivered are left to their workers (a running match finishes and counts; a
# dead worker's job is dropped by whoever reclaims it).
# KEYS: 1 tournament hash, 2 jobs stream, 3 cancelled set
# ARGV: 1 group, 2 tournament id, 3 now, 4 (optional) the state it ends in: "cancelled" (default) or "finished"
# (a controller that decided, e.g. an SPRT: its queued jobs are dropped the same way, set at <state>_at)
# Returns {status, dropped}: status -1 unknown tournament, 0 not running (nothing changed), 1 cancelled now.
CANCEL_TOURNAMENT = """
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {-1, 0} end
if state ~= 'running' then return {0, 0} end
local final = ARGV[4] or 'cancelled'
redis.call('HSET', KEYS[1], 'state', final, final .. '_at', ARGV[3])
if redis.call('EXISTS', KEYS[2]) == 0 then return {1, 0} end
local last = '0-0'
for _, g in ipairs(redis.call('XINFO', 'GROUPS', KEYS[2])) do
  local name, delivered
  for i = 1, #g, 2 do
    if g[i] == 'name' then name = g[i + 1] end
    if g[i] == 'last-delivered-id' then delivered = g[i + 1] end
  end
  if name == ARGV[1] then last = delivered end
end
local dropped = 0
local start = '(' .. last
while true do
  local entries = redis.call('XRANGE', KEYS[2], start, '+', 'COUNT', 1000)
  if #entries == 0 then break end
  for _, e in ipairs(entries) do
    local f = e[2]
    local tournament, mid
    for i = 1, #f, 2 do
      if f[i] == 'tournament' then tournament = f[i + 1] end
      if f[i] == 'match' then mid = f[i + 1] end
    end
    if tournament == ARGV[2] then
      redis.call('XDEL', KEYS[2], e[1])
      if mid then dropped = dropped + redis.call('SADD', KEYS[3], mid) end
    end
    start = '(' .. e[1]
  end
end
return {1, dropped}
"""

# Claim for consumer ARGV[2] of group ARGV[1] up to ARGV[3] new jobs from the jobs streams KEYS, in their order:
# what the first stream holds, then the next stream's for what is still wanted (one server only: the streams are in
# different cluster slots). KEYS: the jobs streams. ARGV: 1 group, 2 consumer, 3 count.
# Returns {missing, claimed}: missing, the indexes (1-based) of the KEYS that have no group (nothing read there);
# claimed, {key index, entry id, fields (flat list)} each, in claim order.
CLAIM_NEW = """
local want = tonumber(ARGV[3])
local missing, claimed = {}, {}
for k = 1, #KEYS do
  if want <= 0 then break end
  local reply = redis.pcall('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', want, 'STREAMS', KEYS[k], '>')
  if type(reply) == 'table' and reply.err then
    if string.find(reply.err, 'NOGROUP', 1, true) == nil then return redis.error_reply(reply.err) end
    table.insert(missing, k)
  elseif type(reply) == 'table' and reply[1] then
    for _, e in ipairs(reply[1][2]) do
      table.insert(claimed, {k, e[1], e[2] or {}})
      want = want - 1
    end
  end
end
return {missing, claimed}
"""

# Claim for ARGV[2] up to ARGV[4] pending jobs idle for at least ARGV[3] ms (their workers are taken for dead).
# KEYS: 1 jobs stream. ARGV: 1 group, 2 consumer, 3 min idle ms, 4 count.
# Returns {entry id, deliveries including this one, fields (flat list; empty when the entry was deleted)} each.
RECLAIM = """
local out = {}
local pending = redis.call('XPENDING', KEYS[1], ARGV[1], 'IDLE', ARGV[3], '-', '+', ARGV[4])
for _, p in ipairs(pending) do
  local claimed = redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], p[1])
  if #claimed > 0 then
    local fields = {}
    if claimed[1] then fields = claimed[1][2] end
    table.insert(out, {p[1], p[4] + 1, fields})
  end
end
return out
"""

# Reset the idle time of the jobs ARGV[3..] that are still pending for consumer ARGV[2] (without counting a
# delivery). KEYS: 1 jobs stream. ARGV: 1 group, 2 consumer, 3.. entry ids.
# Returns {entry id, consumer now holding it} for each job no longer its own ('' when it is settled).
REFRESH = """
local lost = {}
for i = 3, #ARGV do
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1)
  if p[1] and p[1][2] == ARGV[2] then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
  elseif p[1] then
    table.insert(lost, {ARGV[i], p[1][2]})
  else
    table.insert(lost, {ARGV[i], ''})
  end
end
return lost
"""

# Hand back the jobs ARGV[4..] still pending for consumer ARGV[2] that it claimed ahead and never started (a
# stopping worker's prefetched jobs): their idle time becomes ARGV[3] ms (the visibility timeout), so the next
# reclaim of any worker takes them at once, and their delivery count goes back by one (that reclaim counts the
# delivery again: a claim given back unplayed is no delivery). KEYS: 1 jobs stream. ARGV: 1 group, 2 consumer,
# 3 idle ms, 4.. entry ids. Returns how many were handed back.
RELEASE = """
local n = 0
for i = 4, #ARGV do
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1)
  if p[1] and p[1][2] == ARGV[2] then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'IDLE', ARGV[3], 'RETRYCOUNT',
               math.max(p[1][4] - 1, 0), 'JUSTID')
    n = n + 1
  end
end
return n
"""

# Register (or re-register) a bot version, claiming NAME for the owner hash ARGV[1] when nobody owns it in this
# game. (That no other owner holds NAME in another game is settled before, in the same registration, by the owner
# scripts ``OWNER_ADD_NAME`` / ``OWNER_CREATE``: their keys share the ``{owners}`` hash tag, these the game's.)
# KEYS: 1 owner, 2 versions zset, 3 bot hash, 4 bots set, 5 bot index zset, 6 the owner's bots set (the bot ids the
#       owner hash ARGV[1] registered in this game; optional: none without an owner), 7 the game's removed owners
#       (optional, with 6: an owner the organiser removed registers nothing, answered as another owner's NAME)
# ARGV: 1 owner hash ('' = no ownership), 2 name, 3 version, 4 bot id, 5 game, 6 endpoint, 7 now,
#       8 sdk_version, 9 author, 10 bot secret ('' keeps the version's secret, if any), 11 the most versions NAME
#       may hold (0 or absent: no limit), 12 the most bot versions the owner may hold in this game, over all its
#       names (0 or absent: no limit), 13 '1' when the registration checked the bot's GetInfo (its name and version
#       are then held by the bot record's 'checked'), else '0' (absent: not written)
# Returns {claimed 1/0, registered_at}, {-1, ''} when NAME belongs to another owner hash, {-2, ''} when ARGV[3] is
# a new version and NAME holds the most versions already, {-3, ''} when it is a new version and the owner holds the
# most versions already (nothing written).
REGISTER_BOT = """
local claimed = 0
if ARGV[1] ~= '' and KEYS[7] and redis.call('SISMEMBER', KEYS[7], ARGV[1]) == 1 then return {-1, ''} end
if ARGV[1] ~= '' then
  local owner = redis.call('GET', KEYS[1])
  if owner and owner ~= ARGV[1] then return {-1, ''} end
end
local new = not redis.call('ZSCORE', KEYS[2], ARGV[3])
local most = tonumber(ARGV[11] or '0') or 0
if new and most > 0 and redis.call('ZCARD', KEYS[2]) >= most then return {-2, ''} end
local owned = tonumber(ARGV[12] or '0') or 0
if new and owned > 0 and KEYS[6] and redis.call('SCARD', KEYS[6]) >= owned then return {-3, ''} end
if ARGV[1] ~= '' and redis.call('SETNX', KEYS[1], ARGV[1]) == 1 then claimed = 1 end
redis.call('HSET', KEYS[3], 'name', ARGV[2], 'version', ARGV[3], 'bot_id', ARGV[4], 'game', ARGV[5],
           'endpoint', ARGV[6], 'updated_at', ARGV[7], 'sdk_version', ARGV[8], 'author', ARGV[9])
if ARGV[10] and ARGV[10] ~= '' then redis.call('HSET', KEYS[3], 'secret', ARGV[10]) end
if ARGV[13] and ARGV[13] ~= '' then redis.call('HSET', KEYS[3], 'checked', ARGV[13]) end
redis.call('HSETNX', KEYS[3], 'registered_at', ARGV[7])
local registered = redis.call('HGET', KEYS[3], 'registered_at')
redis.call('ZADD', KEYS[2], 'NX', registered, ARGV[3])
redis.call('SADD', KEYS[4], ARGV[4])
if KEYS[5] then redis.call('ZADD', KEYS[5], 0, ARGV[4]) end
if KEYS[6] then redis.call('SADD', KEYS[6], ARGV[4]) end
return {claimed, registered}
"""

# Change the endpoint (and GetInfo details) of a registered bot version. KEYS: 1 bot hash.
# ARGV: 1 endpoint, 2 now, 3 sdk_version, 4 author, 5 bot secret ('' keeps it). Returns 1 updated, 0 not registered.
UPDATE_BOT = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'endpoint', ARGV[1], 'updated_at', ARGV[2], 'sdk_version', ARGV[3], 'author', ARGV[4])
if ARGV[5] and ARGV[5] ~= '' then redis.call('HSET', KEYS[1], 'secret', ARGV[5]) end
return 1
"""

# Count one block of an SPRT once (``arena.store.sprt``): record its outcome under its number and, the first time
# only, add it to the counts. KEYS: 1 blocks hash, 2 SPRT hash. ARGV: 1 block number, 2 outcome (half points, a
# whole number; or a relative-score difference, a decimal number) or "void" (a table failed: not counted), 3 the
# prefix of its count's field: "h:" (half points; the default when absent) or "d:" (relative score). Returns 1
# counted now, 0 counted before (nothing changed).
SPRT_COUNT_BLOCK = """
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
if ARGV[2] == 'void' then
  redis.call('HINCRBY', KEYS[2], 'void', 1)
else
  redis.call('HINCRBY', KEYS[2], (ARGV[3] or 'h:') .. ARGV[2], 1)
end
return 1
"""

# Store an SPRT's verdict once. KEYS: 1 SPRT hash. ARGV: field, value, field, value, ... (the first pair is
# 'verdict', then reason, decided_at, final, llr). Returns 1 stored now, 0 a verdict was stored before (kept).
SPRT_DECIDE = """
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
return 1
"""

# One settled match in ONE atomic step (``ResultStore.settle_match``): its result and Elo update (RECORD_RESULT),
# the acknowledgement and deletion of its job, and the health of its bots (RECORD_HEALTH), so the exactly-once path
# is a single call, on one server or a Redis Cluster alike (every key is of the game's hash tag).
# KEYS: the RECORD_RESULT keys (ARGV[1] of them), the jobs stream, then the RECORD_HEALTH keys (ARGV[3] of them;
#       none: no health to count).
# ARGV: 1 how many RECORD_RESULT keys, 2 how many RECORD_RESULT arguments, 3 how many RECORD_HEALTH keys, then the
#       RECORD_RESULT arguments, the consumer group, the job's entry id, then the RECORD_HEALTH arguments.
# Returns {1, health replies (RECORD_HEALTH's), error text or absent}: stored now, acknowledged, health counted (a
# health error is returned as text, the rest done: health is advice); {0}: stored before, acknowledged now;
# {-1, the seats' current ratings (nil: no rating yet)}: a rating moved since it was read, nothing changed.
SETTLE_MATCH = ("""
local function record_result(KEYS, ARGV)
""" + RECORD_RESULT + """
end
local function record_health(KEYS, ARGV)
""" + RECORD_HEALTH + """
end
local function slice(t, from, to)
  local out = {}
  for i = from, to do out[#out + 1] = t[i] end
  return out
end
local nr, na, nh = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local rkeys, rargs = slice(KEYS, 1, nr), slice(ARGV, 4, 3 + na)
local stored = record_result(rkeys, rargs)
if stored == -1 then
  local current = {}
  for i = 1, tonumber(rargs[4]) do
    current[i] = redis.call('ZSCORE', rkeys[3], rargs[8 + (i - 1) * 6 + 1])
  end
  return {-1, current}
end
redis.call('XACK', KEYS[nr + 1], ARGV[4 + na], ARGV[5 + na])
redis.call('XDEL', KEYS[nr + 1], ARGV[5 + na])
if stored == 0 or nh == 0 then return {stored} end
local ok, health = pcall(record_health, slice(KEYS, nr + 2, nr + 1 + nh), slice(ARGV, 6 + na, #ARGV))
if not ok then return {1, {}, tostring(health)} end
return {1, health}
""")
