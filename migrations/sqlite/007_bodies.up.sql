-- 007: each activity body stored once (issue 15). A fan-out to a million
-- inboxes used to write its activity a million times, once in each job's
-- payload; now the body is kept once in bodies, under its content address
-- (hex SHA-256, domain.BodyOf), and each job names it in body_id. The
-- number is PostgreSQL's 009 and Mongo's 007 (numbers were assigned per
-- change, so 005 and 006 are free here).
--
-- herald_sha256_hex is registered by adapters/sqlite before the migrations
-- run (the Go function domain.BodyOf, so both compute the same address).
-- jobs_body_id_idx, which Purge uses to find a body's last job, is made by
-- EnsureIndexes with the other query indexes.
CREATE TABLE bodies (
    id   TEXT NOT NULL PRIMARY KEY,
    body BLOB NOT NULL
) STRICT;

ALTER TABLE jobs ADD COLUMN body_id TEXT NOT NULL DEFAULT '';

INSERT INTO bodies (id, body)
SELECT herald_sha256_hex(payload), payload FROM jobs WHERE length(payload) > 0
ON CONFLICT (id) DO NOTHING;

UPDATE jobs SET body_id = herald_sha256_hex(payload) WHERE length(payload) > 0;

ALTER TABLE jobs DROP COLUMN payload;
