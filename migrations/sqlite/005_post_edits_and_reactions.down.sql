-- 005 down: forget when posts were edited (their edited content stays) and
-- every Like and Announce count.
DROP TABLE reactions;
ALTER TABLE posts DROP COLUMN updated;
ALTER TABLE dm_posts DROP COLUMN updated;
