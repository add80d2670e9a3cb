-- 006: when a post's author last edited it (Update{Note}); NULL for a post
-- never edited. An Update applies only if it is later than the last edit
-- (or the publication), so a repeated or late one changes nothing.
BEGIN;

ALTER TABLE posts ADD COLUMN IF NOT EXISTS updated timestamptz;
ALTER TABLE dm_posts ADD COLUMN IF NOT EXISTS updated timestamptz;

-- Likes and Announces of posts by remote actors, once per (post, actor,
-- kind); the primary key also serves the counts by post.
CREATE TABLE IF NOT EXISTS reactions (
    object_uri text        NOT NULL,
    actor_uri  text        NOT NULL,
    kind       text        NOT NULL CHECK (kind IN ('like', 'announce')),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (object_uri, actor_uri, kind)
);

COMMIT;
