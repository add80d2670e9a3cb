-- 005 (PostgreSQL's 006): when a post's author last edited it, in Unix
-- nanoseconds as the other times; NULL for a post never edited.
ALTER TABLE posts ADD COLUMN updated INTEGER;
ALTER TABLE dm_posts ADD COLUMN updated INTEGER;

-- Likes and Announces of posts by remote actors, once per (post, actor,
-- kind); the primary key also serves the counts by post.
CREATE TABLE reactions (
    object_uri TEXT    NOT NULL,
    actor_uri  TEXT    NOT NULL,
    kind       TEXT    NOT NULL CHECK (kind IN ('like', 'announce')),
    created_at INTEGER NOT NULL,
    PRIMARY KEY (object_uri, actor_uri, kind)
) WITHOUT ROWID;
