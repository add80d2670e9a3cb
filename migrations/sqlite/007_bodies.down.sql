-- 007 down: each job carries its activity again. Every job gets its body's
-- bytes back in payload; a job whose body was missing gets an empty payload
-- (it could not have been sent either way). Then bodies goes.
ALTER TABLE jobs ADD COLUMN payload BLOB NOT NULL DEFAULT x'';

UPDATE jobs SET payload = coalesce((SELECT body FROM bodies WHERE bodies.id = jobs.body_id), x'')
WHERE body_id <> '';

DROP INDEX IF EXISTS jobs_body_id_idx;
ALTER TABLE jobs DROP COLUMN body_id;
DROP TABLE bodies;
