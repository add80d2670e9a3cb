-- 016 (PostgreSQL's 025, Mongo's 011): what a post carries beside its text
-- (SPEC §12). extras is the JSON of domain.Extras without the poll (''
-- for none: every post stored before); poll is the JSON of its
-- domain.Poll ('' for none), apart because only the poll store methods
-- write it. post_hashtags indexes the public posts by hashtag, a row per
-- (post, tag) with the post's published time (written and deleted with
-- the post; the index by tag and time is EnsureIndexes'). poll_votes
-- holds the votes of polls, one per (poll, voter, slot): the slot is the
-- option of a multiple-choice poll and '' in a single-choice one, so that
-- its primary key admits one vote per voter there. open_polls lists the
-- polls written here that are not closed yet, and whether votes came
-- since their followers were last told.
ALTER TABLE posts ADD COLUMN extras TEXT NOT NULL DEFAULT '';
ALTER TABLE posts ADD COLUMN poll TEXT NOT NULL DEFAULT '';
ALTER TABLE dm_posts ADD COLUMN extras TEXT NOT NULL DEFAULT '';

CREATE TABLE post_hashtags (
    object_uri TEXT    NOT NULL,
    tag        TEXT    NOT NULL,
    published  INTEGER NOT NULL,
    PRIMARY KEY (object_uri, tag)
) WITHOUT ROWID;

CREATE TABLE poll_votes (
    object_uri TEXT    NOT NULL,
    voter_uri  TEXT    NOT NULL,
    slot       TEXT    NOT NULL,
    choice     TEXT    NOT NULL,
    voted_at   INTEGER NOT NULL,
    PRIMARY KEY (object_uri, voter_uri, slot)
) WITHOUT ROWID;

CREATE TABLE open_polls (
    object_uri TEXT    NOT NULL PRIMARY KEY,
    end_time   INTEGER NOT NULL,
    changed    INTEGER NOT NULL DEFAULT 0
) STRICT;
