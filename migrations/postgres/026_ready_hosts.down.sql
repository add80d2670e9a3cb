-- 026 down: the lease reads the queue in run_at order again (an older
-- version's lease); the host rows and their slot counts stay.
BEGIN;

DROP INDEX IF EXISTS host_slots_ready_idx;
ALTER TABLE host_slots DROP COLUMN IF EXISTS ready_at;

COMMIT;
