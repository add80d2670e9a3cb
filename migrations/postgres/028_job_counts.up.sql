-- 028: the queue's counts by state and host, kept as deltas (issue 36).
--
-- The operator API's queue view and the herald_jobs gauge read how many
-- jobs each state holds, and the hosts with the most queued, leased and
-- dead jobs. Counted from jobs, each reading walked every job kept (a
-- week of finished ones by default): seconds at a busy instance's load.
--
-- job_counts holds signed deltas, (state, host, n), summed at read
-- (JobStore.Counts, CountsByHost): it has rows per host and pass, not per
-- job. Statement triggers with transition tables add one row per (state,
-- host) a statement changed, in the very statement that inserts, moves or
-- deletes jobs, whichever statement that is (the store's, an operator's in
-- psql, an older process's): the sums equal the jobs in every snapshot.
-- Rows are only ever inserted, never updated, so writers in several
-- processes share no counter row and wait on none. A reaper pass folds
-- them (foldCountsSQL: one DELETE … RETURNING summed back, one row per
-- (state, host) left), so a reading sums a few reaper periods of rows.
BEGIN;

CREATE TABLE job_counts (
    state text COLLATE "C" NOT NULL,
    host  text COLLATE "C" NOT NULL,
    n     bigint NOT NULL
);

-- Each function names its tables by search_path as set when it is made
-- (the schema the migration ran in), whatever the session that fires it.
CREATE FUNCTION herald_jobs_inserted() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO job_counts (state, host, n)
    SELECT state, host, count(*) FROM new_jobs GROUP BY state, host;
    RETURN NULL;
END $$;

-- Every UPDATE fires it (a trigger with transition tables takes no column
-- list); one that moves no job to another state or host adds no row.
CREATE FUNCTION herald_jobs_updated() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO job_counts (state, host, n)
    SELECT state, host, sum(d) FROM (
        SELECT state, host, -1 AS d FROM old_jobs
        UNION ALL SELECT state, host, 1 FROM new_jobs
    ) moved
    GROUP BY state, host HAVING sum(d) <> 0;
    RETURN NULL;
END $$;

CREATE FUNCTION herald_jobs_deleted() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO job_counts (state, host, n)
    SELECT state, host, -count(*) FROM old_jobs GROUP BY state, host;
    RETURN NULL;
END $$;

CREATE FUNCTION herald_jobs_truncated() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    DELETE FROM job_counts;
    RETURN NULL;
END $$;

-- The triggers take jobs' SHARE ROW EXCLUSIVE lock until COMMIT: no job
-- moves between them and the count below.
CREATE TRIGGER jobs_counted_by_insert AFTER INSERT ON jobs
REFERENCING NEW TABLE AS new_jobs
FOR EACH STATEMENT EXECUTE FUNCTION herald_jobs_inserted();

CREATE TRIGGER jobs_counted_by_update AFTER UPDATE ON jobs
REFERENCING OLD TABLE AS old_jobs NEW TABLE AS new_jobs
FOR EACH STATEMENT EXECUTE FUNCTION herald_jobs_updated();

CREATE TRIGGER jobs_counted_by_delete AFTER DELETE ON jobs
REFERENCING OLD TABLE AS old_jobs
FOR EACH STATEMENT EXECUTE FUNCTION herald_jobs_deleted();

CREATE TRIGGER jobs_counted_by_truncate AFTER TRUNCATE ON jobs
FOR EACH STATEMENT EXECUTE FUNCTION herald_jobs_truncated();

INSERT INTO job_counts (state, host, n)
SELECT state, host, count(*) FROM jobs GROUP BY state, host;

COMMIT;
