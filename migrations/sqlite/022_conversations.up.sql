-- 022: the client API's conversations (issue 34): each local persona's
-- direct threads, one row per (persona, thread), id the thread's
-- participants key. last_status_id is the id of the thread's newest
-- direct post (UUIDv7: it sorts by time), the order a persona's
-- conversations are listed and paged in, along
-- conversations_persona_last_idx. A hidden conversation is no row; the
-- next direct post of its thread makes it again. Threads of direct posts
-- stored before 022 show from their next post on.
CREATE TABLE conversations (
    persona        TEXT NOT NULL,
    id             TEXT NOT NULL,
    participants   TEXT NOT NULL DEFAULT '[]',
    last_status_id TEXT NOT NULL,
    unread         INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (persona, id)
) STRICT;
CREATE INDEX conversations_persona_last_idx ON conversations (persona, last_status_id);
