-- 002 down: drop the queue and the breaker states. Only for going back to
-- the old serial worker: queued jobs are lost with the table, so run 004's
-- down step first (MigrateDown does, in order), which hands the moved legacy
-- deliveries that were not yet attempted back to the old worker.
BEGIN;

DROP TABLE jobs;
DROP TABLE remote_instances;

COMMIT;
