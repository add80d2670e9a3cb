-- 015 down: each job carries its activity id, sender, key id and body id
-- again, copied from its job_activities row, and its dedupe key as hex. A
-- key 015 hashed (one that was not hex) comes back as the hex of that
-- hash. The indexes on the old columns are made again by the older
-- version's EnsureIndexes, as is its lease function.
BEGIN;

ALTER TABLE jobs
    ADD COLUMN activity_id text NOT NULL DEFAULT '',
    ADD COLUMN sender_id text NOT NULL DEFAULT '',
    ADD COLUMN key_id text NOT NULL DEFAULT '',
    ADD COLUMN body_id text COLLATE "C" NOT NULL DEFAULT '';

UPDATE jobs j SET activity_id = a.activity_id, sender_id = a.sender_id, key_id = a.key_id, body_id = a.body_id
FROM job_activities a
WHERE a.id = j.activity;

ALTER TABLE jobs ALTER COLUMN activity_id DROP DEFAULT, ALTER COLUMN sender_id DROP DEFAULT, ALTER COLUMN key_id DROP DEFAULT;
ALTER TABLE jobs DROP COLUMN activity;
ALTER TABLE jobs ALTER COLUMN dedupe_key TYPE text USING encode(dedupe_key, 'hex');

DROP TABLE job_activities;
DROP FUNCTION IF EXISTS herald_lease_v3(text, text, timestamptz, timestamptz, text[], integer, integer, integer);

COMMIT;
