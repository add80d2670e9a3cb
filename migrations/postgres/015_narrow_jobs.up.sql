-- 015: a narrower jobs row (issues 13 and 15). A fan-out's jobs all carry
-- the same activity id, sender, key id and body id: about 240 bytes a row,
-- written a million times for a post to a million followers. They move to
-- job_activities, one row per fan-out, which each job names by a bigint
-- (jobs.activity). The dedupe key, the hex of a SHA-256, is kept as its 32
-- bytes, which halves jobs_dedupe_key_key too. Measured by
-- test/bench/sql/jobs-row-size.sql: 996 bytes per queued job before, 532
-- after. jobs_activity_idx (Purge's "any job left?") and
-- job_activities_body_id_idx are made by EnsureIndexes.
--
-- job_activities.key is the SHA-256 of the four fields, each after its
-- length in bytes and a colon (the adapter's activityKey computes the same),
-- so a fan-out enqueued in many batches finds its row, and the unique index
-- stays small whatever the URLs' length.
--
-- Processes of an older version read the dropped columns: run every
-- process at this version.
BEGIN;

CREATE TABLE job_activities (
    id          bigint GENERATED ALWAYS AS IDENTITY,
    key         bytea NOT NULL,
    activity_id text NOT NULL,
    sender_id   text NOT NULL,
    key_id      text NOT NULL,
    body_id     text COLLATE "C" NOT NULL DEFAULT '',
    CONSTRAINT job_activities_pkey PRIMARY KEY (id),
    CONSTRAINT job_activities_key_key UNIQUE (key)
);

INSERT INTO job_activities (key, activity_id, sender_id, key_id, body_id)
SELECT DISTINCT ON (k) k, activity_id, sender_id, key_id, body_id
FROM (
    SELECT sha256(convert_to(
        octet_length(activity_id) || ':' || activity_id || octet_length(sender_id) || ':' || sender_id ||
        octet_length(key_id) || ':' || key_id || octet_length(body_id) || ':' || body_id, 'UTF8')) AS k,
        activity_id, sender_id, key_id, body_id
    FROM jobs
) j
ORDER BY k;

ALTER TABLE jobs ADD COLUMN activity bigint;

UPDATE jobs j SET activity = a.id
FROM job_activities a
WHERE a.key = sha256(convert_to(
    octet_length(j.activity_id) || ':' || j.activity_id || octet_length(j.sender_id) || ':' || j.sender_id ||
    octet_length(j.key_id) || ':' || j.key_id || octet_length(j.body_id) || ':' || j.body_id, 'UTF8'));

ALTER TABLE jobs ALTER COLUMN activity SET NOT NULL;
ALTER TABLE jobs DROP COLUMN activity_id, DROP COLUMN sender_id, DROP COLUMN key_id, DROP COLUMN body_id;

-- A key that is not 64 hex digits (none that domain.DedupeKey made) keeps
-- its uniqueness as the SHA-256 of its text. The type change rewrites the
-- table, which also gives back the room of the dropped columns.
ALTER TABLE jobs ALTER COLUMN dedupe_key TYPE bytea USING
    CASE WHEN dedupe_key ~ '^[0-9a-f]{64}$' THEN decode(dedupe_key, 'hex') ELSE sha256(convert_to(dedupe_key, 'UTF8')) END;

-- The lease function of the wide row; herald_lease_v3 replaces it.
DROP FUNCTION IF EXISTS herald_lease_v2(text, text, timestamptz, timestamptz, text[], integer, integer, integer);

COMMIT;
