-- 008: the durable fan-out records (issue 15; PostgreSQL's 010). A post to
-- many followers is enqueued page by page; fan_outs remembers how far it
-- got (cursor: the last follower URI whose inboxes are enqueued) and who
-- runs it (owner, lease_until), so a fan-out a crash interrupted is
-- claimed again and continued after the cursor. The activity is kept here
-- too: a fan-out interrupted before its first page has no body yet. Its
-- indexes are made by EnsureIndexes with the others.
CREATE TABLE fan_outs (
    id          TEXT NOT NULL PRIMARY KEY,
    actor_uri   TEXT NOT NULL,
    sender_id   TEXT NOT NULL,
    key_id      TEXT NOT NULL,
    payload     BLOB NOT NULL,
    body_id     TEXT NOT NULL,
    cursor      TEXT NOT NULL DEFAULT '',
    total       INTEGER NOT NULL DEFAULT 0,
    queued      INTEGER NOT NULL DEFAULT 0,
    done        INTEGER NOT NULL DEFAULT 0,
    owner       TEXT NOT NULL DEFAULT '',
    lease_until INTEGER,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
) STRICT;

