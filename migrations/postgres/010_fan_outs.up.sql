-- 010: the durable fan-out records (issue 15). A post to many followers is
-- enqueued page by page; fan_outs remembers how far it got (cursor: the
-- last follower URI whose inboxes are enqueued) and who runs it (owner,
-- lease_until), so a fan-out a crash interrupted is claimed again and
-- continued after the cursor. The activity is kept here too: a fan-out
-- interrupted before its first page has no body in bodies yet. Its indexes
-- are made by EnsureIndexes with the others.
BEGIN;

CREATE TABLE fan_outs (
    id          text COLLATE "C" NOT NULL,
    actor_uri   text NOT NULL,
    sender_id   text NOT NULL,
    key_id      text NOT NULL,
    payload     bytea NOT NULL,
    body_id     text COLLATE "C" NOT NULL,
    cursor      text COLLATE "C" NOT NULL DEFAULT '',
    total       integer NOT NULL DEFAULT 0,
    queued      bigint NOT NULL DEFAULT 0,
    done        boolean NOT NULL DEFAULT false,
    owner       text NOT NULL DEFAULT '',
    lease_until timestamptz,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    CONSTRAINT fan_outs_pkey PRIMARY KEY (id)
);


COMMIT;
