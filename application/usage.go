package application

import (
	"context"
	"fmt"
	"time"
)

// Usage is what NodeInfo reports of this instance: personas (groups and
// the instance actor are not users), those active in the last month and
// half year (their account signed in, or they posted), and the posts
// written here.
type Usage struct {
	Users, ActiveMonth, ActiveHalfyear, LocalPosts int
}

// The windows of NodeInfo's activeMonth and activeHalfyear, as Mastodon
// and GoToSocial count them.
const (
	activeMonth    = 30 * 24 * time.Hour
	activeHalfyear = 180 * 24 * time.Hour
)

// Usage counts the instance's users and posts now.
func (h LocalActorsHandler) Usage(ctx context.Context) (Usage, error) {
	d := h.core.deps
	now := d.Clock.Now()
	var u Usage
	for _, c := range []struct {
		dst   *int
		since time.Time
	}{{&u.Users, time.Time{}}, {&u.ActiveMonth, now.Add(-activeMonth)}, {&u.ActiveHalfyear, now.Add(-activeHalfyear)}} {
		n, err := d.Actors.CountPersonas(ctx, c.since)
		if err != nil {
			return Usage{}, fmt.Errorf("usage: %w", err)
		}
		*c.dst = n
	}
	n, err := d.Posts.CountLocalPosts(ctx)
	if err != nil {
		return Usage{}, fmt.Errorf("usage: %w", err)
	}
	u.LocalPosts = n
	return u, nil
}

// touch records that personas were active now (NodeInfo's active users).
// A statistic: a store error is logged and does not fail the sign-in or
// post it came with.
func touch(ctx context.Context, d Deps, ids ...string) {
	if len(ids) == 0 {
		return
	}
	if err := d.Actors.TouchAvatars(ctx, ids, d.Clock.Now()); err != nil {
		d.Log.WarnContext(ctx, "could not record persona activity", "personas", len(ids), "err", err)
	}
}

// touchUser records that the user's personas were active now: the user
// signed in.
func touchUser(ctx context.Context, d Deps, userID string) {
	as, err := d.Actors.AvatarsOf(ctx, userID)
	if err != nil {
		d.Log.WarnContext(ctx, "could not record persona activity", "user_id", userID, "err", err)
		return
	}
	ids := make([]string, len(as))
	for i, a := range as {
		ids[i] = a.ID
	}
	touch(ctx, d, ids...)
}
