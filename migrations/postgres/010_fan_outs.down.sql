-- 010 down: the fan-out records go; the jobs they enqueued stay. A fan-out
-- still running is not resumed by an older version.
BEGIN;
DROP TABLE IF EXISTS fan_outs;
COMMIT;
