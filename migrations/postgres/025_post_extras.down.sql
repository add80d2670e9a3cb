-- Drops what posts carry beside their text, the hashtag index and the
-- polls' votes (the posts and their text stay). Take a backup first:
-- media, content warnings, hashtags and polls are lost.
BEGIN;
DROP TABLE IF EXISTS open_polls;
DROP TABLE IF EXISTS poll_votes;
DROP TABLE IF EXISTS post_hashtags;
ALTER TABLE dm_posts DROP COLUMN IF EXISTS extras;
ALTER TABLE posts DROP COLUMN IF EXISTS poll, DROP COLUMN IF EXISTS extras;
COMMIT;
