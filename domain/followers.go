package domain

import (
	"fmt"
	"time"
)

// FollowState is pending until the followed side accepts.
type FollowState string

const (
	FollowPending  FollowState = "pending"
	FollowAccepted FollowState = "accepted"
)

// Valid reports whether s is known.
func (s FollowState) Valid() bool { return s == FollowPending || s == FollowAccepted }

// Follower is one follow relation between two actors, local or remote: a
// remote actor following a local one, or a local persona following a remote
// actor. (FollowerURI, FollowedURI) is unique; State is the third part of the
// triple. An Undo or a Reject removes the row.
type Follower struct {
	FollowerURI string
	FollowedURI string
	State       FollowState
	ActivityID  string // the Follow activity, for Accept/Undo matching
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// NewFollower validates a follow relation.
func NewFollower(follower, followed, activityID string, state FollowState, now time.Time) (Follower, error) {
	if follower == "" || followed == "" {
		return Follower{}, fmt.Errorf("%w: a follow needs both actors", ErrInvalidInput)
	}
	if follower == followed {
		return Follower{}, fmt.Errorf("%w: an actor cannot follow itself", ErrInvalidInput)
	}
	if !state.Valid() {
		return Follower{}, fmt.Errorf("%w: follow state %q", ErrInvalidInput, state)
	}
	now = now.UTC()
	return Follower{FollowerURI: follower, FollowedURI: followed, State: state,
		ActivityID: activityID, CreatedAt: now, UpdatedAt: now}, nil
}
