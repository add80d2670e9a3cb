package application

import (
	"context"
	"fmt"

	"github.com/heraldfed/herald/domain"
)

// MuteActor asks that a persona mute (or unmute) an actor: its posts are
// left out of the persona's reads (mentions). Nothing is sent: a mute is
// the persona's own business, as on Mastodon.
type MuteActor struct {
	UserID string
	As     string // persona name; must be the user's
	Target string // URI or user@host, remote or local
	Unmute bool
}

// Muted says where the mute stands.
type Muted struct {
	Target  string
	Changed bool // false: muted (or not muted) already
}

// MuteActorHandler mutes and unmutes.
type MuteActorHandler struct{ core *fedCore }

// Handle mutes or unmutes cmd.Target as cmd.As.
func (h MuteActorHandler) Handle(ctx context.Context, cmd MuteActor) (Muted, error) {
	d := h.core.deps
	if d.Blocks == nil {
		return Muted{}, fmt.Errorf("%w: mutes are not kept by this server", domain.ErrUnavailable)
	}
	me, target, err := h.core.parties(ctx, cmd.UserID, cmd.As, cmd.Target)
	if err != nil {
		return Muted{}, err
	}
	if cmd.Unmute {
		_, err := d.Blocks.RemoveBlock(ctx, me.URI, target.URI, domain.BlockKindMute)
		if notFound(err) {
			return Muted{Target: target.URI}, nil
		}
		return Muted{Target: target.URI, Changed: err == nil}, err
	}
	m, err := domain.NewActorBlock(me.URI, target.URI, domain.BlockKindMute, "", d.Clock.Now())
	if err != nil {
		return Muted{}, err
	}
	created, err := d.Blocks.AddBlock(ctx, m)
	return Muted{Target: target.URI, Changed: created}, err
}
