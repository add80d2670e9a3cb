-- 016 down: each job's dedupe key is its 32 bytes again: the one kept in
-- dedupe_full, else DedupeKey(activity id, inbox) derived as the adapter
-- does. A job whose job_activities row is missing (it is settled dead
-- when leased) keeps the 16 bytes it has, the only ones known.
BEGIN;

ALTER TABLE jobs DROP CONSTRAINT IF EXISTS jobs_dedupe_key_length;

UPDATE jobs j SET dedupe_key = COALESCE(j.dedupe_full, (
    SELECT sha256(convert_to(a.activity_id, 'UTF8') || '\x00'::bytea || convert_to(j.inbox, 'UTF8'))
    FROM job_activities a WHERE a.id = j.activity), j.dedupe_key);

ALTER TABLE jobs DROP COLUMN dedupe_full;

DROP FUNCTION IF EXISTS herald_lease_v4(text, text, timestamptz, timestamptz, text[], integer, integer, integer);

COMMIT;
