-- 006: when each persona was last active (its account signed in, or it
-- posted), for NodeInfo's active users (issue 17). NULL: not since this
-- migration. The count reads every avatar (a few per account), rarely: no
-- index.
ALTER TABLE avatars ADD COLUMN last_active_at INTEGER;
