-- 019: the queue's counts by state and host, kept by triggers (issue 36).
--
-- The operator API's queue view and the metrics read how many jobs each
-- state holds, and the hosts with the most queued, leased and dead jobs.
-- Counted from jobs, each reading walked every job kept (the finished
-- ones too, a week of them by default): at a busy instance's load the view
-- took seconds after minutes. job_counts has one row per state and host:
-- the readings walk hosts, not jobs (JobStore.Counts, CountsByHost).
--
-- The triggers keep the counts inside the very statement that inserts a
-- job, moves it to another state or host, or deletes it, whichever
-- statement that is (the store's, or an operator's on the file), as
-- host_slots' of migration 004: the counts equal the jobs at every commit
-- (TestJobCountsMatchJobsUnderChaos). Rows that reach 0 stay (one per
-- state and host ever seen); the readings pass over them.
CREATE TABLE job_counts (
    state TEXT NOT NULL,
    host  TEXT NOT NULL,
    n     INTEGER NOT NULL CHECK (n >= 0),
    PRIMARY KEY (state, host)
) STRICT, WITHOUT ROWID;

INSERT INTO job_counts (state, host, n)
SELECT state, host, count(*) FROM jobs GROUP BY state, host;

CREATE TRIGGER jobs_counted_by_insert AFTER INSERT ON jobs BEGIN
    INSERT INTO job_counts (state, host, n) VALUES (NEW.state, NEW.host, 1)
        ON CONFLICT (state, host) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER jobs_counted_by_update AFTER UPDATE OF state, host ON jobs
WHEN OLD.state <> NEW.state OR OLD.host <> NEW.host BEGIN
    UPDATE job_counts SET n = n - 1 WHERE state = OLD.state AND host = OLD.host;
    INSERT INTO job_counts (state, host, n) VALUES (NEW.state, NEW.host, 1)
        ON CONFLICT (state, host) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER jobs_counted_by_delete AFTER DELETE ON jobs BEGIN
    UPDATE job_counts SET n = n - 1 WHERE state = OLD.state AND host = OLD.host;
END;
