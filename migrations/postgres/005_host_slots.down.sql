-- 005 down: drop the per-host slot counts; the jobs are untouched (the
-- older lease caps per process again).
BEGIN;

DROP TABLE IF EXISTS host_slots;

COMMIT;
