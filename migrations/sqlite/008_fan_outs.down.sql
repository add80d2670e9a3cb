-- 008 down: the fan-out records go; the jobs they enqueued stay.
DROP TABLE IF EXISTS fan_outs;
