-- 016: the dedupe key's unique index holds 16 bytes a job, not 32 (issue
-- 15). jobs.dedupe_key keeps the first 16 bytes of the key's SHA-256: two
-- keys share them with a chance of about n²/2¹²⁹ (1e-19 for ten billion
-- jobs), and the unique index, whose entries are random and so fill their
-- pages to about 70%, shrinks from 76 to about 51 bytes a job, the row by
-- 16 more. The whole key is not lost: it is DedupeKey(activity id, inbox),
-- which the adapter derives again when it reads a job; a key that is not
-- that one (a caller may give any) is kept whole in dedupe_full, NULL
-- otherwise (no room: the row has a null bitmap already).
--
-- The CHECK makes a process of an older version, which writes 32-byte
-- keys, fail its enqueue loudly instead of deduping against nothing: run
-- every process at this version.
BEGIN;

ALTER TABLE jobs ADD COLUMN dedupe_full bytea;

UPDATE jobs j SET dedupe_full = j.dedupe_key
WHERE j.dedupe_key IS DISTINCT FROM (
    SELECT sha256(convert_to(a.activity_id, 'UTF8') || '\x00'::bytea || convert_to(j.inbox, 'UTF8'))
    FROM job_activities a WHERE a.id = j.activity);

-- The type change with USING rewrites the table, the unique index with it,
-- which also drops the dead row versions the UPDATE left.
ALTER TABLE jobs ALTER COLUMN dedupe_key TYPE bytea USING substr(dedupe_key, 1, 16);
ALTER TABLE jobs ADD CONSTRAINT jobs_dedupe_key_length CHECK (octet_length(dedupe_key) = 16);

-- The lease function reads the 32-byte key; herald_lease_v4 replaces it.
DROP FUNCTION IF EXISTS herald_lease_v3(text, text, timestamptz, timestamptz, text[], integer, integer, integer);

COMMIT;
