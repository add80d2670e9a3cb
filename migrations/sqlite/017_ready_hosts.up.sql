-- 017: the hosts that are ready (issue 36, PostgreSQL's 026). A lease reads
-- the hosts whose oldest queued job is due and that are below their cap,
-- and then only their jobs, so its cost follows the jobs it returns, not the
-- backlog of hosts held at their cap (adapters/sqlite/jobs.go, leaseSQL).
--
-- host_slots.ready_at is the run_at of each host's oldest queued job, NULL
-- when it has none. The triggers keep it, as 004's keep in_flight, inside
-- the very statement that inserts, deletes, queues, leases, defers or
-- resumes a job, whichever statement that is: a job that becomes queued or
-- due earlier lowers it, and the host's oldest job leaving the queue or
-- being put off reads the next one (jobs_host_state_run_at_idx, one index
-- search).
ALTER TABLE host_slots ADD COLUMN ready_at INTEGER;

INSERT INTO host_slots (host, in_flight, ready_at)
SELECT host, count(*) FILTER (WHERE state = 'leased'), min(run_at) FILTER (WHERE state = 'queued')
FROM jobs WHERE state IN ('queued', 'leased') GROUP BY host
HAVING count(*) FILTER (WHERE state = 'queued') > 0
ON CONFLICT (host) DO UPDATE SET ready_at = excluded.ready_at;

CREATE INDEX host_slots_ready_idx ON host_slots (ready_at) WHERE ready_at IS NOT NULL;

-- A host's queued jobs in run_at order; it replaces jobs_host_state_idx
-- (host, state), whose queries it serves too.
CREATE INDEX IF NOT EXISTS jobs_host_state_run_at_idx ON jobs (host, state, run_at);
DROP INDEX IF EXISTS jobs_host_state_idx;

CREATE TRIGGER jobs_ready_by_insert AFTER INSERT ON jobs
WHEN NEW.state = 'queued' BEGIN
    INSERT INTO host_slots (host, in_flight, ready_at) VALUES (NEW.host, 0, NEW.run_at)
        ON CONFLICT (host) DO UPDATE SET ready_at = excluded.ready_at
        WHERE ready_at IS NULL OR ready_at > excluded.ready_at;
END;

CREATE TRIGGER jobs_ready_lowered AFTER UPDATE OF state, run_at, host ON jobs
WHEN NEW.state = 'queued' AND (OLD.state <> 'queued' OR NEW.run_at < OLD.run_at OR NEW.host <> OLD.host) BEGIN
    INSERT INTO host_slots (host, in_flight, ready_at) VALUES (NEW.host, 0, NEW.run_at)
        ON CONFLICT (host) DO UPDATE SET ready_at = excluded.ready_at
        WHERE ready_at IS NULL OR ready_at > excluded.ready_at;
END;

CREATE TRIGGER jobs_ready_raised AFTER UPDATE OF state, run_at, host ON jobs
WHEN OLD.state = 'queued' AND (NEW.state <> 'queued' OR NEW.run_at > OLD.run_at OR NEW.host <> OLD.host) BEGIN
    UPDATE host_slots SET ready_at = (SELECT min(run_at) FROM jobs WHERE host = OLD.host AND state = 'queued')
        WHERE host = OLD.host AND ready_at = OLD.run_at;
END;

CREATE TRIGGER jobs_ready_by_delete AFTER DELETE ON jobs
WHEN OLD.state = 'queued' BEGIN
    UPDATE host_slots SET ready_at = (SELECT min(run_at) FROM jobs WHERE host = OLD.host AND state = 'queued')
        WHERE host = OLD.host AND ready_at = OLD.run_at;
END;
