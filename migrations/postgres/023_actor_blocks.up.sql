-- 023: blocks and mutes of actors by actors (SPEC §11 "Personas"), either
-- side local or remote: a persona's block or mute of a remote actor, a
-- remote actor's Block of a persona. One row per (actor, target, kind),
-- the primary key, which also serves every read: by actor and target
-- (the inbox's one lookup), by actor in target order (a persona's list).
-- COLLATE "C": listed in byte order, as Go compares strings.
BEGIN;

CREATE TABLE IF NOT EXISTS actor_blocks (
    actor_uri   text COLLATE "C" NOT NULL,
    target_uri  text COLLATE "C" NOT NULL,
    kind        text        NOT NULL CHECK (kind IN ('block', 'mute')),
    activity_id text        NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL,
    CONSTRAINT actor_blocks_pkey PRIMARY KEY (actor_uri, target_uri, kind)
);

COMMIT;
