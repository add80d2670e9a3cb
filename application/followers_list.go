package application

import (
	"context"
	"fmt"

	"github.com/heraldfed/herald/domain"
)

// ListFollowers asks for a page of the followers of one of the account's
// personas or groups.
type ListFollowers struct {
	UserID  string
	Persona string
	State   domain.FollowState // accepted when empty
	After   string             // follower URI the previous page ended with
	Limit   int                // DefaultFollowerPage when 0; at most MaxFollowerPage
}

// FollowerPage is one page of followers, by follower URI.
type FollowerPage struct {
	Total     int // followers in that state, all pages
	Followers []domain.Follower
	Next      string // After of the next page; empty on the last
}

// Paging of follower lists.
const (
	DefaultFollowerPage = 40
	MaxFollowerPage     = 200
)

// checkPageLimit refuses a page of fewer than 1 or more than
// MaxFollowerPage items.
func checkPageLimit(limit int) error {
	if limit <= 0 || limit > MaxFollowerPage {
		return fmt.Errorf("%w: limit must be from 1 to %d", domain.ErrInvalidInput, MaxFollowerPage)
	}
	return nil
}

// pageLimit is a page's limit as asked: DefaultFollowerPage when 0, else
// as checkPageLimit checks it.
func pageLimit(limit int) (int, error) {
	if limit == 0 {
		return DefaultFollowerPage, nil
	}
	return limit, checkPageLimit(limit)
}

// ListFollowersHandler lists followers for the persona's owner.
type ListFollowersHandler struct{ core *fedCore }

// Handle returns one page; domain.ErrNotFound for an unknown persona,
// domain.ErrForbidden for someone else's.
func (h ListFollowersHandler) Handle(ctx context.Context, q ListFollowers) (FollowerPage, error) {
	d := h.core.deps
	a, err := (LocalActorsHandler{core: h.core}).ByName(ctx, domain.NameKindPersona, q.Persona)
	if notFound(err) {
		// A group's owner lists its members and requests the same way.
		a, err = (LocalActorsHandler{core: h.core}).ByName(ctx, domain.NameKindGroup, q.Persona)
	}
	if err != nil {
		return FollowerPage{}, err
	}
	if a.OwnerID != q.UserID {
		return FollowerPage{}, fmt.Errorf("%w: %s %q is not yours", domain.ErrForbidden, a.Kind, a.Name)
	}
	if q.State == "" {
		q.State = domain.FollowAccepted
	}
	if !q.State.Valid() {
		return FollowerPage{}, fmt.Errorf("%w: state %q is not pending or accepted", domain.ErrInvalidInput, clip(string(q.State)))
	}
	if q.Limit, err = pageLimit(q.Limit); err != nil {
		return FollowerPage{}, err
	}
	total, err := d.Followers.CountFollowers(ctx, a.URI, q.State)
	if err != nil {
		return FollowerPage{}, err
	}
	// One more than asked tells whether another page follows.
	page, err := d.Followers.Followers(ctx, a.URI, q.State, q.After, q.Limit+1)
	if err != nil {
		return FollowerPage{}, err
	}
	p := FollowerPage{Total: total, Followers: page}
	if len(page) > q.Limit {
		p.Followers = page[:q.Limit]
		p.Next = p.Followers[q.Limit-1].FollowerURI
	}
	return p, nil
}
