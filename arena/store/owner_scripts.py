"""The Lua scripts of a bot NAME's owner (``arena.store.owners`` registers them): each one atomic step over the
owner keys, all of the ``{owners}`` hash tag so they run on one Redis Cluster slot, with its KEYS and ARGV in the
comment above it. A NAME belongs to one owner in every game and every letter case."""

# Two Lua functions that the owner scripts below begin with. A NAME's entry in the name-owners hash is keyed by
# NAME ASCII-lowercased (``keys.name_owners_field``), so names that differ only in letter case are one NAME.
# ``name_holder(hash, field, name)``: the key of the owner that holds NAME (``field`` its lowercased form), or false;
# a field that older data keyed by NAME's own spelling (before names were lowercased there) counts when the
# lowercased one is unset, and is moved to it. ``spellings(set, field)``: of an owner's "GAME/NAME" members, the
# spellings of NAME it holds (a table: spelling -> true; empty when it holds NAME in no game).
_NAME_FUNCTIONS = """
local function name_holder(hash, field, name)
  local holder = redis.call('HGET', hash, field)
  if holder or name == field then return holder end
  holder = redis.call('HGET', hash, name)
  if holder then
    redis.call('HSET', hash, field, holder)
    redis.call('HDEL', hash, name)
  end
  return holder
end
local function spellings(set, field)
  local found = {}
  for _, m in ipairs(redis.call('SMEMBERS', set)) do
    local n = string.sub(m, (string.find(m, '/', 1, true) or #m) + 1)
    if string.lower(n) == field then found[n] = true end
  end
  return found
end
"""

# Add a bot name to an existing owner account under the quotas (``arena.store.owners``). A NAME belongs to one owner
# in every game and every letter case: the name-owners hash (lowercased NAME -> owner key) is checked and set in the
# same step, so of two owners reserving one NAME at once, in one game or in two, in one spelling or in two, exactly
# one gets it. Its owner may add it only in the spelling it holds it in (when it holds it in any).
# KEYS: 1 account hash, 2 the owner's names set, 3 the arena's names set, 4 the name-owners hash.
# ARGV: 1 "GAME/NAME", 2 most names per owner, 3 most names in all (0: no limit), 4 NAME, 5 the owner's key,
#       6 "1": refuse a NAME that another owner holds (in any game and spelling), and another spelling of a NAME
#       this owner holds | "0": record only (adopting stored names; a NAME older data holds for two owners stays
#       theirs), 7 NAME lowercased (``keys.name_owners_field``).
# Returns 1 added, 0 held already, -1 no such owner, -2 the owner's quota, -3 the arena's quota, -6 NAME is
# another owner's, -7 the owner holds NAME in another spelling only (nothing changed but the move of an older field).
OWNER_ADD_NAME = _NAME_FUNCTIONS + """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local holder = name_holder(KEYS[4], ARGV[7], ARGV[4])
if ARGV[6] == '1' and holder and holder ~= ARGV[5] then return -6 end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then
  if not holder then redis.call('HSET', KEYS[4], ARGV[7], ARGV[5]) end
  return 0
end
if ARGV[6] == '1' then
  local held = spellings(KEYS[2], ARGV[7])
  if next(held) ~= nil and not held[ARGV[4]] then return -7 end
end
local per = tonumber(ARGV[2])
if per > 0 and redis.call('SCARD', KEYS[2]) >= per then return -2 end
local total = tonumber(ARGV[3])
if total > 0 and redis.call('SISMEMBER', KEYS[3], ARGV[1]) == 0 and redis.call('SCARD', KEYS[3]) >= total then
  return -3
end
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[1])
if not holder then redis.call('HSET', KEYS[4], ARGV[7], ARGV[5]) end
return 1
"""

# Undo a reservation of ``OWNER_ADD_NAME`` / ``OWNER_CREATE`` (its registration failed): drop "GAME/NAME" from the
# owner's names and, when the owner holds NAME in no other game (in no spelling), NAME's entry in the name-owners
# hash (its lowercased field) if it is this owner's. KEYS: 1 the owner's names set, 2 the name-owners hash.
# ARGV: 1 "GAME/NAME", 2 NAME, 3 the owner's key, 4 NAME lowercased (``keys.name_owners_field``).
# Returns 1 NAME is free again, 0 it is still held (by this owner in another game, or by another owner).
OWNER_RELEASE_NAME = _NAME_FUNCTIONS + """
redis.call('SREM', KEYS[1], ARGV[1])
if name_holder(KEYS[2], ARGV[4], ARGV[2]) ~= ARGV[3] then return 0 end
if next(spellings(KEYS[1], ARGV[4])) ~= nil then return 0 end
redis.call('HDEL', KEYS[2], ARGV[4])
return 1
"""

# Create an owner account, holding a first bot name or none, under the quotas. KEYS: 1 account hash, 2 its names
# set, 3 the arena's names set, 4 index zset, 5 the client address's counter, 6 the name-owners hash (the caller
# files the id under ``keys.OWNER_IDS``, outside the ``{owners}`` hash tag). ARGV: 1 key, 2 owner id,
# 3 label, 4 created_at, 5 created_by, 6 first "GAME/NAME" ('' for none), 7 most names in all, 8 most new owners per
# address and window (0: no limit, nothing counted), 9 the window, s, 10 the first NAME ('' for none), 11 "1": refuse
# a first NAME that another owner holds in any game and spelling (as ``OWNER_ADD_NAME``) | "0": record only
# (adoption), 12 the first NAME lowercased (``keys.name_owners_field``; '' for none).
# Returns 1 created, -3 the arena's quota, -4 the address's quota, -5 the account exists already, -6 the first NAME
# is another owner's (nothing changed but the move of an older field; the address is not counted).
OWNER_CREATE = _NAME_FUNCTIONS + """
if redis.call('EXISTS', KEYS[1]) == 1 then return -5 end
local holder = false
if ARGV[6] ~= '' then holder = name_holder(KEYS[6], ARGV[12], ARGV[10]) end
if ARGV[11] == '1' and holder and holder ~= ARGV[1] then return -6 end
local total = tonumber(ARGV[7])
if ARGV[6] ~= '' and total > 0 and redis.call('SISMEMBER', KEYS[3], ARGV[6]) == 0
   and redis.call('SCARD', KEYS[3]) >= total then
  return -3
end
local per = tonumber(ARGV[8])
if per > 0 then
  if tonumber(redis.call('GET', KEYS[5]) or '0') >= per then return -4 end
  if redis.call('INCR', KEYS[5]) == 1 then redis.call('EXPIRE', KEYS[5], ARGV[9]) end
end
redis.call('HSET', KEYS[1], 'id', ARGV[2], 'label', ARGV[3], 'created_at', ARGV[4], 'created_by', ARGV[5])
redis.call('ZADD', KEYS[4], 0, ARGV[2])
if ARGV[6] ~= '' then
  redis.call('SADD', KEYS[2], ARGV[6])
  redis.call('SADD', KEYS[3], ARGV[6])
  if not holder then redis.call('HSET', KEYS[6], ARGV[12], ARGV[1]) end
end
return 1
"""

# Move a field of the name-owners hash that older data keyed by a NAME's own spelling (with capitals) to NAME's
# lowercased field, unless that is set: then the lowercased field's owner holds NAME in every spelling and the older
# field is dropped (``OwnerStore.migrate_owners``). KEYS: 1 the name-owners hash. ARGV: 1 NAME lowercased, 2 the
# older field (NAME as spelled). Returns 1 moved, 0 dropped or nothing to do.
OWNER_FOLD_NAME = _NAME_FUNCTIONS + """
if ARGV[1] == ARGV[2] then return 0 end
local moved = redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0
name_holder(KEYS[1], ARGV[1], ARGV[2])
redis.call('HDEL', KEYS[1], ARGV[2])
if moved and redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 1 end
return 0
"""
