-- 022 down: an older build knows no deleted persona. The avatars still
-- retired (their Delete going out) become live personas again, and the
-- names of deleted personas become names without an actor, still taken
-- (an older build never releases them either, but answers 404 for them,
-- not 410): let the deletions finish (no retired avatar left) first.
BEGIN;

DROP INDEX IF EXISTS avatars_retired_idx;
ALTER TABLE reserved_names DROP COLUMN IF EXISTS deleted_at;
ALTER TABLE avatars DROP COLUMN IF EXISTS deleted_at;

COMMIT;
