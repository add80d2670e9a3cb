-- 017 down: every job's whole inbox URL in jobs.inbox again.
BEGIN;

ALTER TABLE jobs ALTER COLUMN inbox_ref TYPE text USING herald_inbox(inbox_ref, host);
ALTER TABLE jobs RENAME COLUMN inbox_ref TO inbox;
DROP FUNCTION herald_inbox(text, text);
DROP FUNCTION IF EXISTS herald_lease_v5(text, text, timestamptz, timestamptz, text[], integer, integer, integer);

COMMIT;
