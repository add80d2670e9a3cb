-- 007 down: forget the personas' last activity.
BEGIN;

ALTER TABLE avatars DROP COLUMN IF EXISTS last_active_at;

COMMIT;
