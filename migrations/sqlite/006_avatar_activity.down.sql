-- 006 down: forget the personas' last activity.
ALTER TABLE avatars DROP COLUMN last_active_at;
