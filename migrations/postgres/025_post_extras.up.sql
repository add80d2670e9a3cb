-- 025 (SQLite's 016, Mongo's 011): what a post carries beside its text
-- (SPEC §12). extras is domain.Extras without the poll (NULL for none:
-- every post stored before); poll is its domain.Poll (NULL for none),
-- apart because only the poll store methods write it. post_hashtags
-- indexes the public posts by hashtag, a row per (post, tag) with the
-- post's published time (written and deleted with the post; the index by
-- tag and time is EnsureIndexes'). poll_votes holds the votes of polls,
-- one per (poll, voter, slot): the slot is the option of a
-- multiple-choice poll and '' in a single-choice one, so that its primary
-- key admits one vote per voter there. open_polls lists the polls written
-- here that are not closed yet, and whether votes came since their
-- followers were last told.
BEGIN;
ALTER TABLE posts ADD COLUMN IF NOT EXISTS extras jsonb, ADD COLUMN IF NOT EXISTS poll jsonb;
ALTER TABLE dm_posts ADD COLUMN IF NOT EXISTS extras jsonb;

CREATE TABLE IF NOT EXISTS post_hashtags (
    object_uri text        NOT NULL,
    tag        text        NOT NULL,
    published  timestamptz NOT NULL,
    PRIMARY KEY (object_uri, tag)
);

CREATE TABLE IF NOT EXISTS poll_votes (
    object_uri text        NOT NULL,
    voter_uri  text        NOT NULL,
    slot       text        NOT NULL,
    choice     text        NOT NULL,
    voted_at   timestamptz NOT NULL,
    PRIMARY KEY (object_uri, voter_uri, slot)
);

CREATE TABLE IF NOT EXISTS open_polls (
    object_uri text        NOT NULL PRIMARY KEY,
    end_time   timestamptz NOT NULL,
    changed    boolean     NOT NULL DEFAULT false
);
COMMIT;
