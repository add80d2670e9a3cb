package domain

import (
	"fmt"
	"slices"
	"time"
)

// FanOut is the durable record of one activity's delivery to the followers
// of a local actor. The followers are read in pages ordered by URI, and each
// page's inboxes are enqueued before Cursor moves past it, so a fan-out
// interrupted half way (a crash, a cancelled request) is taken up again
// after Cursor by whichever process claims it next; the jobs' dedupe keys
// make the page that was enqueued but not yet recorded harmless.
type FanOut struct {
	ID       string // the activity id
	ActorURI string // whose accepted followers receive it
	SenderID string // the local actor whose key signs the deliveries
	KeyID    string
	Payload  []byte // the activity JSON; BodyID is its content address
	BodyID   string
	// Cursor is the last follower URI whose inboxes are enqueued ("" for
	// none yet).
	Cursor string
	Total  int // accepted followers when the fan-out began
	// Queued counts the jobs its recorded pages inserted. The pages
	// enqueued but not recorded before a crash (two at most: a page's
	// enqueue runs beside the next's) are not counted (enqueued again,
	// their jobs come back as already queued), so it may fall short, never
	// over; the jobs themselves are counted by ports.JobAdmin.CountsOfBody.
	Queued int
	Done   bool
	// Owner and LeaseUntil say who is running it; another process may
	// claim it once the lease has expired.
	Owner      string
	LeaseUntil time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// NewFanOut validates a fan-out about to start, leased to owner until
// until.
func NewFanOut(activityID, actorURI, senderID, keyID string, payload []byte, total int, owner string, now, until time.Time) (FanOut, error) {
	switch {
	case activityID == "" || actorURI == "":
		return FanOut{}, fmt.Errorf("%w: a fan-out needs an activity id and an actor", ErrInvalidInput)
	case senderID == "" || keyID == "":
		return FanOut{}, fmt.Errorf("%w: a fan-out needs a sender and a key id", ErrInvalidInput)
	case len(payload) == 0:
		return FanOut{}, fmt.Errorf("%w: a fan-out needs a payload", ErrInvalidInput)
	case total < 0:
		return FanOut{}, fmt.Errorf("%w: negative follower count", ErrInvalidInput)
	}
	now = now.UTC()
	return FanOut{
		ID: activityID, ActorURI: actorURI, SenderID: senderID, KeyID: keyID,
		Payload: payload, BodyID: BodyOf(payload), Total: total,
		Owner: owner, LeaseUntil: until.UTC(), CreatedAt: now, UpdatedAt: now,
	}, nil
}

// SpreadHosts orders one page of a fan-out's jobs round by round: the
// first job of every host (hosts in the order they first appear), then the
// second of every host, and so on; one host's jobs keep their order. A
// queue may lease jobs of equal RunAt in the order they were enqueued (the
// memory and SQLite stores do), and followers ordered by URI put a host's
// inboxes side by side, so a host with many inboxes would otherwise take
// its per-host places for a chain of back-to-back deliveries starting
// wherever the host falls in the page; spread out, a slow host's chain
// runs beside the rest of the page instead of after it, and no server gets
// one post's deliveries as a burst.
func SpreadHosts(jobs []Job) {
	if len(jobs) < 3 {
		return
	}
	seen := make(map[string]int, len(jobs))
	round := make([]int, len(jobs)) // how many jobs of its host come before
	rounds := 0
	for i := range jobs {
		round[i] = seen[jobs[i].Host]
		seen[jobs[i].Host]++
		rounds = max(rounds, round[i]+1)
	}
	if rounds == 1 || len(seen) == 1 {
		return // one job a host, or one host: nothing to spread
	}
	// A counting sort by round, stable: within a round, the order of the
	// page.
	start := make([]int, rounds+1)
	for _, r := range round {
		start[r+1]++
	}
	for r := 1; r <= rounds; r++ {
		start[r] += start[r-1]
	}
	src := slices.Clone(jobs)
	for i, r := range round {
		jobs[start[r]] = src[i]
		start[r]++
	}
}
