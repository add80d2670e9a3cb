-- 011 (PostgreSQL's 020): trust (SPEC §10). A key id belongs to one cached actor,
-- held by a unique index on public_key_id (an empty key id claims
-- nothing) in place of EnsureIndexes' plain one. The cache may hold what
-- the index refuses; a cached actor is fetched again when needed, so the
-- copies that go are deleted, not kept aside:
--   1. every copy whose key id is not on its actor's own host: a claim of
--      another host's key, which the trust rules refuse. A host is the part
--      of the URI after the first "://", up to the first "/", "?" or "#",
--      after its last "@" (port kept), compared in lower case; a URI
--      without "://" has the empty host;
--   2. of the copies still sharing one key id, all but the most recently
--      fetched (then the greatest actor URI).
WITH after_scheme AS (
    SELECT rowid AS id,
           substr(actor_uri, instr(actor_uri, '://') + 3) AS ah, instr(actor_uri, '://') > 0 AS ahas,
           substr(public_key_id, instr(public_key_id, '://') + 3) AS kh, instr(public_key_id, '://') > 0 AS khas
    FROM foreign_avatars WHERE public_key_id <> ''
), to_slash AS (
    SELECT id, ahas, khas,
           CASE WHEN instr(ah, '/') > 0 THEN substr(ah, 1, instr(ah, '/') - 1) ELSE ah END AS ah,
           CASE WHEN instr(kh, '/') > 0 THEN substr(kh, 1, instr(kh, '/') - 1) ELSE kh END AS kh
    FROM after_scheme
), to_query AS (
    SELECT id, ahas, khas,
           CASE WHEN instr(ah, '?') > 0 THEN substr(ah, 1, instr(ah, '?') - 1) ELSE ah END AS ah,
           CASE WHEN instr(kh, '?') > 0 THEN substr(kh, 1, instr(kh, '?') - 1) ELSE kh END AS kh
    FROM to_slash
), to_fragment AS (
    SELECT id, ahas, khas,
           CASE WHEN instr(ah, '#') > 0 THEN substr(ah, 1, instr(ah, '#') - 1) ELSE ah END AS ah,
           CASE WHEN instr(kh, '#') > 0 THEN substr(kh, 1, instr(kh, '#') - 1) ELSE kh END AS kh
    FROM to_query
), hosts AS (
    -- after the last "@": rtrim leaves the part up to it, which replace removes
    SELECT id,
           CASE WHEN ahas THEN lower(replace(ah, rtrim(ah, replace(ah, '@', '')), '')) ELSE '' END AS ah,
           CASE WHEN khas THEN lower(replace(kh, rtrim(kh, replace(kh, '@', '')), '')) ELSE '' END AS kh
    FROM to_fragment
)
DELETE FROM foreign_avatars WHERE rowid IN (SELECT id FROM hosts WHERE ah <> kh);

DELETE FROM foreign_avatars WHERE rowid IN (
    SELECT id FROM (
        SELECT rowid AS id,
               row_number() OVER (PARTITION BY public_key_id ORDER BY fetched_at DESC, actor_uri DESC) AS n
        FROM foreign_avatars WHERE public_key_id <> '')
    WHERE n > 1);

DROP INDEX IF EXISTS foreign_avatars_public_key_id_idx;
CREATE UNIQUE INDEX foreign_avatars_public_key_id_key ON foreign_avatars (public_key_id) WHERE public_key_id <> '';

-- Tombstones: the URIs of remote objects and actors their servers deleted,
-- one row per URI (the first deletion stands), deleted_at in Unix
-- nanoseconds as the other times.
CREATE TABLE tombstones (
    uri        TEXT    NOT NULL PRIMARY KEY,
    actor_uri  TEXT    NOT NULL,
    deleted_at INTEGER NOT NULL
) WITHOUT ROWID;
