-- 029: the client API's notifications (issue 34): what a local persona is
-- told of (a mention, a follow or follow request, a favourite, a reblog,
-- an ended poll, an edit of a post it boosted). The actor and the post
-- are named by URI only; the client API reads them when it shows the
-- notification. One per (recipient, dedupe_key): a redelivered activity
-- records nothing new. Ids are UUIDv7 strings compared byte by byte
-- (COLLATE "C", as Go and the other stores compare them): the client API
-- pages by them along notifications_recipient_idx.
BEGIN;

CREATE TABLE IF NOT EXISTS notifications (
    id         text COLLATE "C" NOT NULL,
    recipient  text        NOT NULL,
    kind       text        NOT NULL,
    actor_uri  text        NOT NULL,
    post_uri   text        NOT NULL DEFAULT '',
    dedupe_key text        NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT notifications_pkey PRIMARY KEY (id),
    CONSTRAINT notifications_recipient_key_key UNIQUE (recipient, dedupe_key)
);
CREATE INDEX IF NOT EXISTS notifications_recipient_idx ON notifications (recipient, id);
CREATE INDEX IF NOT EXISTS notifications_actor_idx ON notifications (actor_uri);

COMMIT;
