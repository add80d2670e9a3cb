-- 005 (PostgreSQL's 006): when a post's author last edited it, in Unix
-- nanoseconds as the other times; NULL for a post never edited.
ALTER TABLE posts ADD COLUMN updated INTEGER;
ALTER TABLE dm_posts ADD COLUMN updated INTEGER;
