-- 004 down: give the old worker back what the new engine has not touched.
--
-- A moved delivery whose job is still queued (never leased, or retried and
-- waiting) goes back to 'pending' with the job's attempts, and the job is
-- deleted, in one statement, so the two engines never both hold it. A job
-- that is leased (being sent right now), succeeded or dead stays, and its
-- delivery stays 'abandoned': handing it back could send it twice, which is
-- what 004 exists to prevent. Jobs that did not come from deliveries are
-- not touched here (002's down step drops the table).
BEGIN;

LOCK TABLE deliveries IN SHARE ROW EXCLUSIVE MODE;

WITH handed_back AS (
    DELETE FROM jobs j
    USING legacy_delivery_moves m
    WHERE j.id = m.job_id AND j.state = 'queued'
    RETURNING m.delivery_id, j.attempts
)
UPDATE deliveries d
SET state = 'pending', attempts = h.attempts
FROM handed_back h
WHERE d.id::text = h.delivery_id AND d.state = 'abandoned';

DROP TABLE legacy_delivery_moves;

COMMIT;
