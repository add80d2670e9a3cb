-- 017 down: the lease reads the queue in run_at order again (an older
-- version's lease); the host rows and their slot counts stay.
DROP TRIGGER jobs_ready_by_delete;
DROP TRIGGER jobs_ready_raised;
DROP TRIGGER jobs_ready_lowered;
DROP TRIGGER jobs_ready_by_insert;
CREATE INDEX IF NOT EXISTS jobs_host_state_idx ON jobs (host, state);
DROP INDEX IF EXISTS jobs_host_state_run_at_idx;
DROP INDEX host_slots_ready_idx;
ALTER TABLE host_slots DROP COLUMN ready_at;
