package domain

import (
	"fmt"
	"strings"
	"time"
)

// Tombstone remembers that the object or actor at URI was deleted by its
// server, so that a Create, Update or Announce of that URI replayed later
// (or arriving after its Delete) does not bring it back. SPEC §10.
type Tombstone struct {
	URI string // unique
	// ActorURI is who deleted it: the object's author. When an actor
	// deletes itself, its tombstone and its key's have URI and ActorURI
	// the same (the actor's URI, its key id), which no Delete of another
	// object can write.
	ActorURI  string
	DeletedAt time.Time
}

// NewTombstone validates a tombstone.
func NewTombstone(uri, actorURI string, at time.Time) (Tombstone, error) {
	uri, actorURI = strings.TrimSpace(uri), strings.TrimSpace(actorURI)
	if uri == "" || actorURI == "" {
		return Tombstone{}, fmt.Errorf("%w: a tombstone needs a URI and the actor that deleted it", ErrInvalidInput)
	}
	return Tombstone{URI: uri, ActorURI: actorURI, DeletedAt: at.UTC()}, nil
}
