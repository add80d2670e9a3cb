-- 006: when a post's author last edited it (Update{Note}); NULL for a post
-- never edited. An Update applies only if it is later than the last edit
-- (or the publication), so a repeated or late one changes nothing.
ALTER TABLE posts ADD COLUMN IF NOT EXISTS updated timestamptz;
ALTER TABLE dm_posts ADD COLUMN IF NOT EXISTS updated timestamptz;
