package ports

import (
	"context"

	"github.com/heraldfed/herald/domain"
)

// Delivery is one signed POST of an activity to an inbox.
type Delivery struct {
	Inbox   string
	Payload []byte
	KeyID   string // the signature's keyId: the sending actor's key URL
	// PrivateKeyPEM signs the request (PKCS#8). It is handed over per call
	// so the deliverer holds no key store of its own.
	PrivateKeyPEM string
}

// Deliverer sends one delivery and classifies what happened. It never
// returns an error: every way a delivery can end is an Outcome (network
// errors included), so the engine has one place that decides what to do.
type Deliverer interface {
	Deliver(ctx context.Context, d Delivery) domain.Outcome
}

// WakeSource tells workers that jobs were enqueued elsewhere (another
// process). A store that cannot tell returns a channel that never fires.
// Wakeups is called once per engine; the channel is never closed.
type WakeSource interface {
	Wakeups(ctx context.Context) <-chan struct{}
}
