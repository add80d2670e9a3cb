-- 020: the client API's notifications (issue 34): what a local persona is
-- told of (a mention, a follow or follow request, a favourite, a reblog,
-- an ended poll, an edit of a post it boosted). The actor and the post
-- are named by URI only; the client API reads them when it shows the
-- notification. One per (recipient, dedupe_key): a redelivered activity
-- records nothing new. Ids are UUIDv7 strings: they sort by time, and the
-- client API pages by them along notifications_recipient_idx.
CREATE TABLE notifications (
    id         TEXT NOT NULL PRIMARY KEY,
    recipient  TEXT NOT NULL,
    kind       TEXT NOT NULL,
    actor_uri  TEXT NOT NULL,
    post_uri   TEXT NOT NULL DEFAULT '',
    dedupe_key TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (recipient, dedupe_key)
) STRICT;
CREATE INDEX notifications_recipient_idx ON notifications (recipient, id);
CREATE INDEX notifications_actor_idx ON notifications (actor_uri);
