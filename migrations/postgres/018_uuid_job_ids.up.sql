-- 018: a job's id and its dedupe key as PostgreSQL's uuid, 16 bytes each
-- (issue 15). The id was its 36-character text: 37 bytes in the row and 48
-- in each jobs_pkey entry. The dedupe key's 16 bytes were a bytea: 17 bytes
-- and a 32-byte index entry. Measured with 200,000 jobs shaped as a
-- fan-out's (test/bench/sql/jobs-row-size.sql): 344 bytes a queued job,
-- table and indexes, before; 279 after (row 186 -> 158, jobs_pkey 59 -> 32,
-- jobs_dedupe_key_key 52 -> 42). No reordering of columns is needed: with
-- the two 16-byte columns the row's alignment padding comes out as in a
-- table laid out afresh.
--
-- Every job id a Herald process made is a UUID (UUIDv7; 004 made the moved
-- deliveries' ids UUIDs too), and the domain now requires one. An id that
-- is not (none in a deployment; a hand-made row) is replaced by the UUID
-- of its MD5, so that its job keeps its place and its dedupe key; the down
-- step cannot give the old text back. A UUID in upper case reads back in
-- lower case, the form the domain requires.
--
-- The lease function returns these columns; herald_lease_v6 replaces
-- herald_lease_v5. Processes of an older version pass ids as text and
-- fail loudly: run every process at this version.
BEGIN;

ALTER TABLE jobs
    ALTER COLUMN id TYPE uuid USING
        CASE WHEN id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN id::uuid ELSE md5(id)::uuid END,
    DROP CONSTRAINT jobs_dedupe_key_length,
    ALTER COLUMN dedupe_key TYPE uuid USING encode(dedupe_key, 'hex')::uuid;

DROP FUNCTION IF EXISTS herald_lease_v5(text, text, timestamptz, timestamptz, text[], integer, integer, integer);

COMMIT;
