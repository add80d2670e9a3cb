-- 007: when each persona was last active (its account signed in, or it
-- posted), for NodeInfo's active users (issue 17). NULL: not since this
-- migration. The count reads every avatar (a few per account), rarely: no
-- index. Adding a NULL column rewrites nothing.
BEGIN;

ALTER TABLE avatars ADD COLUMN IF NOT EXISTS last_active_at timestamptz;

COMMIT;
