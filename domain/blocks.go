package domain

import (
	"fmt"
	"time"
)

// BlockKind tells a block from a mute.
type BlockKind string

const (
	// BlockKindBlock: the actor refuses the target (SPEC §11 "Personas"):
	// no follows either way, nothing delivered to it, its activities to
	// the actor refused. Federated (Block, Undo{Block}) when the actor is
	// local; kept when a remote actor blocks one of ours.
	BlockKindBlock BlockKind = "block"
	// BlockKindMute: a persona no longer sees the target's posts in its
	// reads. Local only: nothing is sent.
	BlockKindMute BlockKind = "mute"
)

// Valid reports whether k is known.
func (k BlockKind) Valid() bool { return k == BlockKindBlock || k == BlockKindMute }

// ActorBlock is one actor's block or mute of another, either side local
// or remote (a persona's block of a remote actor, a remote actor's Block
// of a persona). (ActorURI, TargetURI, Kind) is unique.
type ActorBlock struct {
	ActorURI  string // who blocks or mutes
	TargetURI string // whom
	Kind      BlockKind
	// ActivityID is the Block activity (ours, which our Undo names; or
	// the remote's); empty for a mute.
	ActivityID string
	CreatedAt  time.Time
}

// NewActorBlock validates a block or a mute.
func NewActorBlock(actor, target string, kind BlockKind, activityID string, at time.Time) (ActorBlock, error) {
	b := ActorBlock{ActorURI: actor, TargetURI: target, Kind: kind, ActivityID: activityID, CreatedAt: at.UTC()}
	return b, b.Check()
}

// Check is the validation every BlockStore does before it stores b.
func (b ActorBlock) Check() error {
	switch {
	case b.ActorURI == "" || b.TargetURI == "":
		return fmt.Errorf("%w: a block needs both actors", ErrInvalidInput)
	case b.ActorURI == b.TargetURI:
		return fmt.Errorf("%w: an actor cannot block itself", ErrInvalidInput)
	case !b.Kind.Valid():
		return fmt.Errorf("%w: block kind %q is not block or mute", ErrInvalidInput, b.Kind)
	}
	return nil
}
