-- 002 down: drop the queue (every queued delivery is lost with it) and the
-- breaker states.
DROP TABLE jobs;
DROP TABLE remote_instances;
