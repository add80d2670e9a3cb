-- 018 down: the job id as its text (COLLATE "C", the lower-case canonical
-- form) and the dedupe key as 16 bytes of bytea with their CHECK again.
-- An id 018 replaced by the UUID of its MD5 keeps that UUID.
BEGIN;

ALTER TABLE jobs
    ALTER COLUMN id TYPE text COLLATE "C" USING id::text,
    ALTER COLUMN dedupe_key TYPE bytea USING uuid_send(dedupe_key),
    ADD CONSTRAINT jobs_dedupe_key_length CHECK (octet_length(dedupe_key) = 16);

DROP FUNCTION IF EXISTS herald_lease_v6(text, text, timestamptz, timestamptz, text[], integer, integer, integer);

COMMIT;
