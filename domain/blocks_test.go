package domain_test

import (
	"errors"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
)

func TestNewActorBlock(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.FixedZone("x", 3600))
	tests := []struct {
		name          string
		actor, target string
		kind          domain.BlockKind
		wantErr       bool
	}{
		{"block", "https://l.example/users/a", "https://r.example/u/b", domain.BlockKindBlock, false},
		{"mute", "https://l.example/users/a", "https://r.example/u/b", domain.BlockKindMute, false},
		{"no actor", "", "https://r.example/u/b", domain.BlockKindBlock, true},
		{"no target", "https://l.example/users/a", "", domain.BlockKindBlock, true},
		{"itself", "https://l.example/users/a", "https://l.example/users/a", domain.BlockKindBlock, true},
		{"unknown kind", "https://l.example/users/a", "https://r.example/u/b", "hide", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, err := domain.NewActorBlock(tt.actor, tt.target, tt.kind, "", at)
			if tt.wantErr {
				if !errors.Is(err, domain.ErrInvalidInput) {
					t.Fatalf("got %v, want ErrInvalidInput", err)
				}
				return
			}
			if err != nil || b.ActorURI != tt.actor || b.TargetURI != tt.target || b.Kind != tt.kind || b.CreatedAt.Location() != time.UTC || !b.CreatedAt.Equal(at) {
				t.Fatalf("%+v %v", b, err)
			}
		})
	}
}
