-- 031: the client API's conversations (issue 34): each local persona's
-- direct threads, one row per (persona, thread), id the thread's
-- participants key. last_status_id is the id of the thread's newest
-- direct post (UUIDv7, compared in byte order: it sorts by time), the
-- order a persona's conversations are listed and paged in, along
-- conversations_persona_last_idx. A hidden conversation is no row; the
-- next direct post of its thread makes it again. Threads of direct posts
-- stored before 031 show from their next post on.
BEGIN;

CREATE TABLE IF NOT EXISTS conversations (
    persona        text NOT NULL,
    id             text NOT NULL,
    participants   text[] NOT NULL DEFAULT '{}',
    last_status_id text COLLATE "C" NOT NULL,
    unread         boolean NOT NULL DEFAULT false,
    CONSTRAINT conversations_pkey PRIMARY KEY (persona, id)
);
CREATE INDEX IF NOT EXISTS conversations_persona_last_idx ON conversations (persona, last_status_id);

COMMIT;
