-- 005 down: forget when posts were edited; their (edited) content stays.
ALTER TABLE posts DROP COLUMN updated;
ALTER TABLE dm_posts DROP COLUMN updated;
