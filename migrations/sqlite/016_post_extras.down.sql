-- 016 down: drops what posts carry beside their text, the hashtag index,
-- and the polls' votes (the posts and their text stay). Take a backup
-- first: media, content warnings, hashtags and polls are lost.
DROP TABLE open_polls;
DROP TABLE poll_votes;
DROP TABLE post_hashtags;
ALTER TABLE dm_posts DROP COLUMN extras;
ALTER TABLE posts DROP COLUMN poll;
ALTER TABLE posts DROP COLUMN extras;
