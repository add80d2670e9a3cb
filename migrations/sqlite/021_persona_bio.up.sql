-- 021: a persona's bio (Mastodon's note, issue 34), plain text as its
-- owner wrote it; the actor document and the client API render it.
-- Existing personas have none.
ALTER TABLE avatars ADD COLUMN note TEXT NOT NULL DEFAULT '';
