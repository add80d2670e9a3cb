-- 017: a job's inbox without the "https://" and host its host column holds
-- already (issue 15). jobs.inbox becomes jobs.inbox_ref: the inbox's path
-- (it starts with "/") where the inbox is https://HOST/..., HOST exactly
-- the job's host, which is every inbox of a normal fan-out; the whole URL
-- otherwise (another scheme, a host spelt otherwise). About 22 bytes a job
-- fewer at a million followers. herald_inbox(inbox_ref, host) gives the
-- inbox back, for this migration's down step and for operators' SQL.
--
-- The column is renamed, not reused: a process of an older version, which
-- would read a path as an inbox and settle the job as dead, fails its
-- queries loudly instead. Run every process at this version.
BEGIN;

CREATE FUNCTION herald_inbox(inbox_ref text, host text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN left(inbox_ref, 1) = '/' THEN 'https://' || host || inbox_ref ELSE inbox_ref END $$;

ALTER TABLE jobs RENAME COLUMN inbox TO inbox_ref;

-- The type change with USING rewrites the table (and its indexes), leaving
-- no dead row versions behind.
ALTER TABLE jobs ALTER COLUMN inbox_ref TYPE text USING
    CASE WHEN starts_with(inbox_ref, 'https://' || host || '/')
        THEN substr(inbox_ref, length('https://' || host) + 1)
        ELSE inbox_ref END;

-- The lease function reads jobs.inbox; herald_lease_v5 replaces it.
DROP FUNCTION IF EXISTS herald_lease_v4(text, text, timestamptz, timestamptz, text[], integer, integer, integer);

COMMIT;
