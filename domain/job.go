package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// JobState is where a job is in its life. The only transitions are
//
//	queued → leased            (Lease)
//	leased → queued            (Retry, Release, Reap)
//	leased → succeeded | dead  (Complete, Fail, Reap at the last attempt)
//	dead   → queued            (an operator's retry)
type JobState string

const (
	JobQueued    JobState = "queued"
	JobLeased    JobState = "leased"
	JobSucceeded JobState = "succeeded"
	JobDead      JobState = "dead"
)

// JobStates lists every state, in life order, for counts and validation.
var jobStates = [...]JobState{JobQueued, JobLeased, JobSucceeded, JobDead}

// JobStates returns every state in life order.
func JobStates() []JobState { return jobStates[:] }

// Valid reports whether s is a known state.
func (s JobState) Valid() bool {
	for _, k := range jobStates {
		if s == k {
			return true
		}
	}
	return false
}

// Finished reports whether s is terminal (and so subject to retention).
func (s JobState) Finished() bool { return s == JobSucceeded || s == JobDead }

// Job is one unit of durable work: deliver one activity to one inbox.
//
// Invariants (kept by NewJob and by the stores' conditional updates): a leased
// job has a LeaseToken and a LeaseUntil; a finished job has FinishedAt and no
// lease; Attempts counts attempts that ended (delivered, failed or reaped),
// never one that was deferred by a quarantine or released at shutdown.
type Job struct {
	ID         string
	DedupeKey  string
	ActivityID string
	Inbox      string
	Host       string // lower-case host[:port] of Inbox; the per-host cap and breaker key
	SenderID   string // local actor whose key signs the request
	KeyID      string // that actor's public key URL, the signature's keyId
	Payload    []byte // the activity JSON, sent as is
	// BodyID is the content address of Payload (BodyOf): the stores keep
	// each body once, however many jobs send it, and fill Payload from it
	// when they hand a job out. A job given with a BodyID and no Payload
	// refers to a body stored already.
	BodyID string

	State      JobState
	Attempts   int
	RunAt      time.Time
	LeaseOwner string
	LeaseToken string
	LeaseUntil time.Time
	LastError  string
	CreatedAt  time.Time
	FinishedAt time.Time // zero until succeeded or dead
}

// NewJob validates a delivery and returns it queued to run at now. Its id
// is a UUID (JobIDBytes), as IDs makes them: UUIDv7, so ids sort by time.
func NewJob(id, activityID, inbox, senderID, keyID string, payload []byte, now time.Time) (Job, error) {
	if _, err := JobIDBytes(id); err != nil {
		return Job{}, err
	}
	if activityID == "" {
		return Job{}, fmt.Errorf("%w: activity id is empty", ErrInvalidInput)
	}
	host, err := InboxHost(inbox)
	if err != nil {
		return Job{}, err
	}
	if senderID == "" || keyID == "" {
		return Job{}, fmt.Errorf("%w: a delivery needs a sender and a key id", ErrInvalidInput)
	}
	if len(payload) == 0 {
		return Job{}, fmt.Errorf("%w: empty payload", ErrInvalidInput)
	}
	now = now.UTC()
	return Job{
		ID:         id,
		DedupeKey:  DedupeKey(activityID, inbox),
		ActivityID: activityID,
		Inbox:      inbox,
		Host:       host,
		SenderID:   senderID,
		KeyID:      keyID,
		Payload:    payload,
		State:      JobQueued,
		RunAt:      now,
		CreatedAt:  now,
	}, nil
}

// BodyOf is the content address of an activity body: the hex SHA-256 of
// its bytes, "" for no body. Equal bodies share one address, so a fan-out
// (and a second fan-out of the same bytes) stores its activity once.
func BodyOf(payload []byte) string {
	if len(payload) == 0 {
		return ""
	}
	sum := sha256.Sum256(payload)
	return hex.EncodeToString(sum[:])
}

// InboxHost checks that inbox is an absolute http(s) URL and returns its
// lower-cased host (with port when one is given), the key of the per-host cap
// and of the circuit breaker.
func InboxHost(inbox string) (string, error) {
	u, err := url.Parse(inbox)
	if err != nil {
		return "", fmt.Errorf("%w: inbox %q: %v", ErrInvalidInput, inbox, err)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return "", fmt.Errorf("%w: inbox %q is not an http(s) URL", ErrInvalidInput, inbox)
	}
	if u.Host == "" || u.Hostname() == "" {
		return "", fmt.Errorf("%w: inbox %q has no host", ErrInvalidInput, inbox)
	}
	return CanonicalHost(u.Host), nil
}

// DedupeKey identifies "this activity to this inbox". It is a hash so that the
// unique index stays small and fixed-size whatever the length of the URLs; the
// NUL separator keeps ("a", "bc") and ("ab", "c") apart.
func DedupeKey(activityID, inbox string) string {
	sum := DedupeSum(activityID, inbox)
	return hex.EncodeToString(sum[:])
}

// DedupeSum is DedupeKey as the 32 bytes its hex spells, for a store that
// keeps the key in fewer bytes and derives it again when it reads a job.
func DedupeSum(activityID, inbox string) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte(activityID))
	h.Write([]byte{0})
	h.Write([]byte(inbox))
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// DedupeKeyBytes returns the 32 bytes a DedupeKey spells in hex, so a
// store may keep the key in half the room; any other string is
// ErrInvalidInput (every job is built by NewJob, which sets the key).
func DedupeKeyBytes(key string) ([]byte, error) {
	b, err := hex.DecodeString(key)
	if err != nil || len(b) != sha256.Size || hex.EncodeToString(b) != key {
		return nil, fmt.Errorf("%w: dedupe key %q is not a DedupeKey (64 lower-case hex digits)", ErrInvalidInput, key)
	}
	return b, nil
}

// JobIDBytes returns the 16 bytes of a job id: a UUID in its canonical
// form (8-4-4-4-12 lower-case hex digits), any version. A store may keep
// it in those 16 bytes (PostgreSQL's uuid, migration 018) and spell it the
// same way when it reads it back, and every store orders ids as their
// strings sort, which for this form is the order of the bytes. Any other
// string is ErrInvalidInput.
func JobIDBytes(id string) ([16]byte, error) {
	var b [16]byte
	if len(id) != 36 || id[8] != '-' || id[13] != '-' || id[18] != '-' || id[23] != '-' {
		return b, fmt.Errorf("%w: job id %q is not a UUID (8-4-4-4-12 lower-case hex digits)", ErrInvalidInput, id)
	}
	digits := id[0:8] + id[9:13] + id[14:18] + id[19:23] + id[24:36]
	if _, err := hex.Decode(b[:], []byte(digits)); err != nil || strings.ToLower(digits) != digits {
		return b, fmt.Errorf("%w: job id %q is not a UUID (8-4-4-4-12 lower-case hex digits)", ErrInvalidInput, id)
	}
	return b, nil
}

// ValidJobID reports whether id is a job id JobIDBytes accepts.
func ValidJobID(id string) bool {
	_, err := JobIDBytes(id)
	return err == nil
}

// Leasable reports whether the job may be leased at now: queued and due.
func (j Job) Leasable(now time.Time) bool {
	return j.State == JobQueued && !j.RunAt.After(now)
}
