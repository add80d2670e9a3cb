-- 009 (PostgreSQL's 011): boosts (Announces) of notes held here, by a
-- remote actor one of our personas follows or by one of our personas, once
-- per (actor, note); created_at in Unix nanoseconds as the other times.
-- Secondary indexes (by booster and time, by note) are EnsureIndexes'.
CREATE TABLE boosts (
    actor_uri    TEXT    NOT NULL,
    object_uri   TEXT    NOT NULL,
    activity_uri TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (actor_uri, object_uri)
) WITHOUT ROWID;
