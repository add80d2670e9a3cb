-- 019: a queued job's row and queue entry without what only a few jobs need
-- (issue 15). Measured with 200,000 jobs shaped as a fan-out's
-- (test/bench/sql/jobs-row-size.sql): 279 bytes a queued job, table and
-- indexes, before; 239 after (row 158 -> 141, the queue's index 32 -> 8).
--
--   - jobs.seq goes. It was the lease's tie-break among jobs of one run_at
--     (a fan-out's page shares one), which made every entry of the queue's
--     index distinct: 8 bytes in the row and 32 bytes an entry. The queue's
--     index is now jobs_queue_idx on run_at alone (EnsureIndexes makes
--     it): B-tree deduplication keeps a run_at shared by a page's jobs as
--     one key and a list of row pointers, about 8 bytes a job. Jobs of one
--     run_at lease in the index's order, which is the rows' physical order
--     (insertion order for a fan-out); the port leaves that order to the
--     store.
--   - lease_owner, lease_token and last_error are NULL where they were '':
--     a NULL takes no byte (the row has a null bitmap already), and the
--     three bytes of '' pushed created_at onto the next 8-byte boundary.
--     jobs_lease_check requires a non-empty token on a leased job still.
--
-- The type changes with USING rewrite the table (its indexes with it),
-- which also gives back seq's room. The lease function returns no seq:
-- herald_lease_v7 replaces herald_lease_v6. Processes of an older version
-- read seq and fail loudly: run every process at this version.
BEGIN;

ALTER TABLE jobs
    DROP CONSTRAINT jobs_lease_check,
    DROP COLUMN seq,
    ALTER COLUMN lease_owner DROP NOT NULL,
    ALTER COLUMN lease_owner DROP DEFAULT,
    ALTER COLUMN lease_owner TYPE text USING NULLIF(lease_owner, ''),
    ALTER COLUMN lease_token DROP NOT NULL,
    ALTER COLUMN lease_token DROP DEFAULT,
    ALTER COLUMN lease_token TYPE text USING NULLIF(lease_token, ''),
    ALTER COLUMN last_error DROP NOT NULL,
    ALTER COLUMN last_error DROP DEFAULT,
    ALTER COLUMN last_error TYPE text USING NULLIF(last_error, ''),
    ADD CONSTRAINT jobs_lease_check CHECK (state <> 'leased' OR (lease_token IS NOT NULL AND lease_until IS NOT NULL)),
    ADD CONSTRAINT jobs_empty_check CHECK (lease_owner <> '' AND lease_token <> '' AND last_error <> '');

DROP FUNCTION IF EXISTS herald_lease_v6(text, text, timestamptz, timestamptz, text[], integer, integer, integer);

COMMIT;
