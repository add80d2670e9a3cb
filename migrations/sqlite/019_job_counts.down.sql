-- 019 down: drop the kept counts and their triggers; the jobs are
-- untouched (an older build counts them from jobs again).
DROP TRIGGER jobs_counted_by_delete;
DROP TRIGGER jobs_counted_by_update;
DROP TRIGGER jobs_counted_by_insert;
DROP TABLE job_counts;
