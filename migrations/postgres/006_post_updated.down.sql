-- 006 down: forget when posts were edited; their (edited) content stays.
ALTER TABLE posts DROP COLUMN IF EXISTS updated;
ALTER TABLE dm_posts DROP COLUMN IF EXISTS updated;
