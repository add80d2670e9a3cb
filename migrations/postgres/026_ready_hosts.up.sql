-- 026: the hosts that are ready (issue 36). A lease reads the hosts whose
-- oldest queued job is due and not at their cap, and then only their jobs,
-- so its cost follows the jobs it returns, not the backlog of hosts held at
-- their cap (adapters/postgres/jobs.go, leaseSQL).
--
-- host_slots.ready_at is, for each host, a lower bound of its queued jobs'
-- run_at (their minimum, unless a deferral or a suspension left it early),
-- and NULL when it has none: every statement that makes a job queued or
-- due earlier lowers it, under the host's row lock, and the lease raises it
-- again for the hosts it read. Filled here from the queued jobs.
--
-- Processes of an older version enqueue without lowering it: run every
-- process at this version (stop the older ones before the first new one
-- starts), as for 005.
BEGIN;

ALTER TABLE host_slots ADD COLUMN ready_at timestamptz;

-- A host without a row yet (no job of it was ever leased) gets one that
-- counts its leased jobs, as 005 counted them.
INSERT INTO host_slots AS h (host, in_flight, ready_at)
SELECT host, count(*) FILTER (WHERE state = 'leased'), min(run_at) FILTER (WHERE state = 'queued')
FROM jobs WHERE state IN ('queued', 'leased') GROUP BY host
HAVING count(*) FILTER (WHERE state = 'queued') > 0
ORDER BY host
ON CONFLICT (host) DO UPDATE SET ready_at = EXCLUDED.ready_at;

CREATE INDEX host_slots_ready_idx ON host_slots (ready_at) WHERE ready_at IS NOT NULL;

COMMIT;
