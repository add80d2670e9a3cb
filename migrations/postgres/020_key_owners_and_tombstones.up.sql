-- 020: trust (SPEC §10). A key id belongs to one cached actor, held by a unique
-- index on public_key_id (an empty key id claims nothing) in place of
-- EnsureIndexes' plain one. The cache may hold what the index refuses; a
-- cached actor is fetched again when needed, so the copies that go are
-- deleted, not kept aside:
--   1. every copy whose key id is not on its actor's own host: a claim of
--      another host's key, which the trust rules refuse. A host is the part
--      of the URI after the first "://", up to the first "/", "?" or "#",
--      after its last "@" (port kept), compared in lower case; a URI
--      without "://" has the empty host;
--   2. of the copies still sharing one key id, all but the most recently
--      fetched (then the greatest actor URI, in byte order).
BEGIN;

DELETE FROM foreign_avatars
WHERE public_key_id <> ''
  AND lower(COALESCE(substring(public_key_id FROM '://(?:[^/?#]*@)?([^/?#]*)'), ''))
   <> lower(COALESCE(substring(actor_uri FROM '://(?:[^/?#]*@)?([^/?#]*)'), ''));

DELETE FROM foreign_avatars f
USING (SELECT ctid AS row,
              row_number() OVER (PARTITION BY public_key_id ORDER BY fetched_at DESC, actor_uri COLLATE "C" DESC) AS n
       FROM foreign_avatars WHERE public_key_id <> '') d
WHERE f.ctid = d.row AND d.n > 1;

DROP INDEX IF EXISTS foreign_avatars_public_key_id_idx;
CREATE UNIQUE INDEX IF NOT EXISTS foreign_avatars_public_key_id_key ON foreign_avatars (public_key_id) WHERE public_key_id <> '';

-- Tombstones: the URIs of remote objects and actors their servers deleted,
-- one row per URI (the first deletion stands).
CREATE TABLE IF NOT EXISTS tombstones (
    uri        text        PRIMARY KEY,
    actor_uri  text        NOT NULL,
    deleted_at timestamptz NOT NULL
);

COMMIT;
