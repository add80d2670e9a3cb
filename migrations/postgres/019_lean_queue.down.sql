-- 019 down: jobs.seq again, numbered in the rows' physical order (a
-- fan-out's insertion order), and '' for the NULL lease and error columns.
-- EnsureIndexes of the older version makes its queue index on (run_at,
-- seq) again; this drops 019's.
BEGIN;

DROP INDEX IF EXISTS jobs_queue_idx;

ALTER TABLE jobs
    DROP CONSTRAINT jobs_lease_check,
    DROP CONSTRAINT jobs_empty_check,
    ALTER COLUMN lease_owner TYPE text USING COALESCE(lease_owner, ''),
    ALTER COLUMN lease_owner SET DEFAULT '',
    ALTER COLUMN lease_owner SET NOT NULL,
    ALTER COLUMN lease_token TYPE text USING COALESCE(lease_token, ''),
    ALTER COLUMN lease_token SET DEFAULT '',
    ALTER COLUMN lease_token SET NOT NULL,
    ALTER COLUMN last_error TYPE text USING COALESCE(last_error, ''),
    ALTER COLUMN last_error SET DEFAULT '',
    ALTER COLUMN last_error SET NOT NULL,
    ADD CONSTRAINT jobs_lease_check CHECK (state <> 'leased' OR (lease_token <> '' AND lease_until IS NOT NULL));

ALTER TABLE jobs ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;

DROP FUNCTION IF EXISTS herald_lease_v7(text, text, timestamptz, timestamptz, text[], integer, integer, integer);

COMMIT;
