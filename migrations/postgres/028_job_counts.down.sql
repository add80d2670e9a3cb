-- 028 down: drop the kept counts and their triggers; the jobs are
-- untouched (an older build counts them from jobs again).
BEGIN;

DROP TRIGGER IF EXISTS jobs_counted_by_truncate ON jobs;
DROP TRIGGER IF EXISTS jobs_counted_by_delete ON jobs;
DROP TRIGGER IF EXISTS jobs_counted_by_update ON jobs;
DROP TRIGGER IF EXISTS jobs_counted_by_insert ON jobs;
DROP FUNCTION IF EXISTS herald_jobs_truncated();
DROP FUNCTION IF EXISTS herald_jobs_deleted();
DROP FUNCTION IF EXISTS herald_jobs_updated();
DROP FUNCTION IF EXISTS herald_jobs_inserted();
DROP TABLE IF EXISTS job_counts;

COMMIT;
