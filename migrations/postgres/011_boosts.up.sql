-- 011: boosts (Announces) of notes held here, by a remote actor one of our
-- personas follows or by one of our personas, once per (actor, note). They
-- are listed among the booster's posts; a post's boosts go with it.
-- Secondary indexes (by booster and time, by note) are EnsureIndexes'.
BEGIN;

CREATE TABLE IF NOT EXISTS boosts (
    actor_uri    text        NOT NULL,
    object_uri   text        NOT NULL,
    activity_uri text        NOT NULL,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (actor_uri, object_uri)
);

COMMIT;
