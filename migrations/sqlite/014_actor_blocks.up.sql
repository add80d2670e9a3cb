-- 014 (PostgreSQL's 023): blocks and mutes of actors by actors (SPEC §11
-- "Personas"), either side local or remote: a persona's block or mute of
-- a remote actor, a remote actor's Block of a persona. One row per
-- (actor, target, kind), the primary key, which also serves every read:
-- by actor and target (the inbox's one lookup), by actor in target order
-- (a persona's list). Times are Unix nanoseconds, as everywhere.
CREATE TABLE actor_blocks (
    actor_uri   TEXT    NOT NULL,
    target_uri  TEXT    NOT NULL,
    kind        TEXT    NOT NULL CHECK (kind IN ('block', 'mute')),
    activity_id TEXT    NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (actor_uri, target_uri, kind)
) STRICT, WITHOUT ROWID;
