-- 004: move the old serial worker's pending deliveries into jobs (SPEC §5).
--
-- Each pending row of deliveries becomes one queued job, and the row is
-- marked 'abandoned' in the same transaction, so a rollback to the old worker
-- cannot send it a second time. Running this again moves nothing twice: only
-- 'pending' rows are read, and a job whose dedupe key exists is not inserted
-- again (ON CONFLICT DO NOTHING; its row is still marked abandoned, because
-- the activity is queued already).
--
-- Stop the old workers before this runs: a row one of them read as pending
-- and is sending right now is moved too, and would then be sent twice.
--
-- How a row maps to a job:
--   activity   the activity JSON, in a jsonb or a text column. Its "id" is
--              the job's ActivityID; the JSON text is the payload.
--   inbox      as is; the host is its authority, lower-cased, as
--              domain.InboxHost has it (userinfo dropped, port kept).
--   actor      the local sender, either as its key id ("…#main-key") or as
--              its actor URI; a URI without a fragment is taken as the
--              actor, and its key id is the URI + "#main-key", the key id
--              Herald's actor documents publish. The job's SenderID is the
--              local actor with that URI's name: /users/{name} a persona,
--              /groups/{name} a group, /actor the instance actor.
--   attempts   kept, so the retry curve goes on where the old worker was.
--   created    kept as CreatedAt, and as the time part of the job's UUIDv7
--              id, so paging jobs by id still pages by age.
--   dedupe key hex sha256(activity id || 0x00 || inbox), domain.DedupeKey's
--              formula (a test holds the two to each other).
-- A row that cannot become a valid job (activity not JSON or without an id,
-- inbox not http(s), sender not a local actor) stays 'pending', untouched:
-- MigrateUp logs how many are left so an operator can look at them.
BEGIN;

LOCK TABLE deliveries IN SHARE ROW EXCLUSIVE MODE;

-- Which job each moved delivery became, for the down step.
CREATE TABLE IF NOT EXISTS legacy_delivery_moves (
    delivery_id text NOT NULL PRIMARY KEY,
    job_id      text NOT NULL,
    moved_at    timestamptz NOT NULL DEFAULT now()
);

-- A cast that answers NULL instead of failing the migration on bad JSON.
CREATE FUNCTION pg_temp.herald_try_jsonb(t text) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RETURN t::jsonb;
EXCEPTION WHEN others THEN
    RETURN NULL;
END
$$;

WITH pending AS (
    SELECT d.id::text AS delivery_id,
           d.activity::text AS activity_text,
           pg_temp.herald_try_jsonb(d.activity::text) ->> 'id' AS activity_id,
           d.inbox,
           lower(substring(d.inbox FROM '^[Hh][Tt][Tt][Pp][Ss]?://(?:[^/?#@]*@)?([^/?#@]+)') COLLATE "C") AS host,
           split_part(d.actor, '#', 1) AS actor_uri,
           CASE WHEN strpos(d.actor, '#') > 0 THEN d.actor ELSE d.actor || '#main-key' END AS key_id,
           d.attempts,
           COALESCE(d.created, now()) AS created
    FROM deliveries d
    WHERE d.state = 'pending'
),
resolved AS (
    SELECT p.*,
           COALESCE(
               (SELECT a.id FROM avatars a
                WHERE a.root_user_id <> ''
                  AND a.name = substring(p.actor_uri FROM '/users/([^/?#]+)/?$')
                ORDER BY a.created_at, a.id LIMIT 1),
               (SELECT g.id FROM groups g
                WHERE g.name = substring(p.actor_uri FROM '/groups/([^/?#]+)/?$')
                ORDER BY g.created_at, g.id LIMIT 1),
               (SELECT a.id FROM avatars a
                WHERE (a.root_user_id IS NULL OR a.root_user_id = '')
                  AND p.actor_uri ~ '/actor/?$'
                ORDER BY a.created_at, a.id LIMIT 1)
           ) AS sender_id,
           -- A UUIDv7 whose time is the delivery's: the random v4 bits with
           -- the first 48 replaced by the Unix milliseconds and version 7.
           overlay(overlay(gen_random_uuid()::text
               PLACING (substr(ms.hex, 1, 8) || '-' || substr(ms.hex, 9, 4)) FROM 1 FOR 13)
               PLACING '7' FROM 15 FOR 1) AS job_id
    FROM pending p
    CROSS JOIN LATERAL (
        SELECT lpad(to_hex(floor(extract(epoch FROM p.created) * 1000)::bigint), 12, '0') AS hex
    ) ms
),
movable AS MATERIALIZED (
    SELECT * FROM resolved
    WHERE activity_id IS NOT NULL AND activity_id <> ''
      AND host IS NOT NULL AND host <> ''
      AND sender_id IS NOT NULL
),
inserted AS (
    INSERT INTO jobs (id, dedupe_key, activity_id, inbox, host, sender_id, key_id, payload,
                      state, attempts, run_at, created_at)
    SELECT m.job_id,
           encode(sha256(convert_to(m.activity_id, 'UTF8') || '\x00'::bytea || convert_to(m.inbox, 'UTF8')), 'hex'),
           m.activity_id, m.inbox, m.host, m.sender_id, m.key_id,
           convert_to(m.activity_text, 'UTF8'),
           'queued', m.attempts, now(), m.created
    FROM movable m
    ORDER BY m.created, m.delivery_id
    ON CONFLICT (dedupe_key) DO NOTHING
    RETURNING id
),
recorded AS (
    INSERT INTO legacy_delivery_moves (delivery_id, job_id)
    SELECT m.delivery_id, m.job_id
    FROM movable m JOIN inserted i ON i.id = m.job_id
    ON CONFLICT (delivery_id) DO NOTHING
    RETURNING 1
)
UPDATE deliveries d
SET state = 'abandoned'
FROM movable m
WHERE d.id::text = m.delivery_id AND d.state = 'pending';

DROP FUNCTION pg_temp.herald_try_jsonb(text);

COMMIT;
