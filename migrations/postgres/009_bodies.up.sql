-- 009: each activity body stored once (issue 15). A fan-out to a million
-- inboxes used to write its activity a million times, once in each job's
-- payload; now the body is kept once in bodies, under its content address
-- (hex SHA-256, domain.BodyOf: sha256() here computes the same), and each
-- job names it in body_id. jobs_body_id_idx, which Purge uses to find a
-- body's last job, is made by EnsureIndexes with the other query indexes.
-- Processes of an older version write payload, which is gone: run every
-- process at this version.
BEGIN;

CREATE TABLE bodies (
    id   text COLLATE "C" NOT NULL,
    -- bytea, not jsonb: the activity is sent exactly as it was signed.
    body bytea NOT NULL,
    CONSTRAINT bodies_pkey PRIMARY KEY (id)
);

ALTER TABLE jobs ADD COLUMN body_id text COLLATE "C" NOT NULL DEFAULT '';

INSERT INTO bodies (id, body)
SELECT DISTINCT ON (h) h, payload
FROM (SELECT encode(sha256(payload), 'hex') AS h, payload FROM jobs WHERE payload <> '') p
ORDER BY h;

UPDATE jobs SET body_id = encode(sha256(payload), 'hex') WHERE payload <> '';

ALTER TABLE jobs DROP COLUMN payload;

COMMIT;
