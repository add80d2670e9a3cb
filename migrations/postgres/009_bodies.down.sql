-- 009 down: each job carries its activity again. Every job gets its body's
-- bytes back in payload; a job whose body was missing gets an empty payload
-- (it could not have been sent either way). Then bodies goes, and body_id
-- with its index.
BEGIN;

ALTER TABLE jobs ADD COLUMN payload bytea NOT NULL DEFAULT '';

UPDATE jobs j SET payload = b.body FROM bodies b WHERE b.id = j.body_id;

ALTER TABLE jobs ALTER COLUMN payload DROP DEFAULT;
ALTER TABLE jobs DROP COLUMN body_id;
DROP TABLE bodies;

COMMIT;
