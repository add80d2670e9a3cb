package memory

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/heraldfed/herald/domain"
)

// entry is one stored job, kept compact because a fan-out queues one per
// inbox (issue 15: at most 300 bytes a queued job). The fields every job
// of a fan-out shares sit once in act, the host once in hq, times as
// nanoseconds, and the fields a queued job has not got (lease, last error)
// in more, allocated when set. The dedupe key is not kept when it is the
// one domain.NewJob gives, a hash of the activity and the inbox, which the
// entry holds: it is hashed again when wanted (a lease, a duplicate, a
// purge), some 100 ns. toJob turns the entry back into the domain.Job it
// was given.
type entry struct {
	id string
	// inbox is the job's Inbox, or only what follows its scheme and host
	// (the host is in hq) when inboxScheme says which scheme went before.
	inbox string
	act   *activity
	hq    *hostQueue
	more  *entryMore
	seq   uint64 // insertion order: ties of runAt lease first in, first out
	runAt instant
	// createdAt and finishedAt are per job: a fan-out's pages are created
	// at different times, and its jobs finish one by one.
	createdAt   instant
	finishedAt  instant
	attempts    int32
	state       jobState
	inboxScheme inboxScheme
	givenKey    bool // the DedupeKey is not the derived one: more.key holds it
}

// inboxScheme says how an entry's inbox is kept: whole, or as its path
// alone, for the scheme and host (often half the URL) are known from hq.
type inboxScheme uint8

const (
	wholeInbox inboxScheme = iota
	httpsInbox
	httpInbox
)

func (sc inboxScheme) prefix() string {
	switch sc {
	case httpsInbox:
		return "https://"
	case httpInbox:
		return "http://"
	}
	return ""
}

// compactInbox returns what to keep of inbox, whose host is host: the
// path, copied so that the whole URL is not kept alive by it, when the
// URL is scheme, host and path to the byte; else the URL as given.
func compactInbox(inbox, host string) (string, inboxScheme) {
	for _, sc := range [...]inboxScheme{httpsInbox, httpInbox} {
		rest, ok := strings.CutPrefix(inbox, sc.prefix())
		if !ok {
			continue
		}
		if path, ok := strings.CutPrefix(rest, host); ok && strings.HasPrefix(path, "/") {
			return strings.Clone(path), sc
		}
		break
	}
	return inbox, wholeInbox
}

func (e *entry) fullInbox() string {
	if e.inboxScheme == wholeInbox {
		return e.inbox
	}
	return e.inboxScheme.prefix() + e.hq.host + e.inbox
}

// entryMore holds what a queued job of a fan-out has not got, so that it
// costs one nil pointer there.
type entryMore struct {
	leaseOwner string
	leaseToken string
	leaseUntil instant
	lastError  string
	key        string // a DedupeKey that is not the derived one
}

func (m *entryMore) empty() bool { return *m == entryMore{leaseUntil: zeroInstant} }

// activity holds the fields a fan-out's jobs share. The store keeps one per
// distinct value, counting the jobs that refer to it, like bodies.
type activity struct {
	activityKey
	refs int
}

type activityKey struct {
	id, sender, keyID, bodyID string
}

// instant is a time as nanoseconds since the Unix epoch, a third of a
// time.Time. It keeps every time between the years 1678 and 2262 to the
// nanosecond (in UTC: the location is not kept); those outside are
// clamped, which keeps their order, and the zero time has its own value.
type instant int64

const zeroInstant instant = math.MinInt64

func instantOf(t time.Time) instant {
	switch sec := t.Unix(); {
	case t.IsZero():
		return zeroInstant
	case sec < math.MinInt64/int64(time.Second)+1:
		return zeroInstant + 1
	case sec > math.MaxInt64/int64(time.Second)-1:
		return math.MaxInt64
	}
	return instant(t.UnixNano())
}

func (n instant) time() time.Time {
	if n == zeroInstant {
		return time.Time{}
	}
	return time.Unix(0, int64(n)).UTC()
}

// jobState is a domain.JobState as its index in domain.JobStates.
type jobState uint8

// noState stands for a state that is not one: it matches no entry.
const noState jobState = math.MaxUint8

func stateOf(st domain.JobState) jobState {
	if i := slices.Index(domain.JobStates(), st); i >= 0 {
		return jobState(i)
	}
	return noState
}

func (st jobState) domain() domain.JobState { return domain.JobStates()[st] }

// dedupeKey is a DedupeKey as given, and the 32 bytes its hex spells.
type dedupeKey struct {
	text string
	sum  [32]byte
}

// parseDedupeKey decodes k, which ports.CheckJobs found to be 64
// lower-case hex digits, without allocating. (Were it not, sum would be
// no hash of an activity and an inbox, and the key would be kept, and
// found, as given.)
func parseDedupeKey(k string) dedupeKey {
	d := dedupeKey{text: k}
	var src [2 * len(d.sum)]byte
	copy(src[:], k)
	_, _ = hex.Decode(d.sum[:], src[:])
	return d
}

// derivedKey is domain.DedupeKey(activityID, inbox) as bytes, the inbox
// given as compactInbox keeps it, hashed without allocating. Should
// domain.DedupeKey change, no key would match it any more and each would
// be kept as given: more room, the same answers (TestDerivedKey watches).
func derivedKey(activityID string, sc inboxScheme, host, inbox string) [32]byte {
	var buf [256]byte
	b := append(buf[:0], activityID...)
	b = append(b, 0)
	if sc != wholeInbox {
		b = append(append(b, sc.prefix()...), host...)
	}
	return sha256.Sum256(append(b, inbox...))
}

func (e *entry) derivedKey() [32]byte {
	return derivedKey(e.act.id, e.inboxScheme, e.hq.host, e.inbox)
}

// short is the index of a derived key in byKey: any 8 of its bytes do,
// for a hash spreads them evenly; keys that share them go to collided.
func short(sum *[32]byte) uint64 { return binary.LittleEndian.Uint64(sum[:8]) }

func (e *entry) dedupeKey() string {
	if e.givenKey {
		return e.more.key
	}
	sum := e.derivedKey()
	return hex.EncodeToString(sum[:])
}

// moreFields returns e.more, allocating it on first use.
func (e *entry) moreFields() *entryMore {
	if e.more == nil {
		e.more = &entryMore{leaseUntil: zeroInstant}
	}
	return e.more
}

// tidy drops e.more once nothing is left in it.
func (e *entry) tidy() {
	if e.more != nil && e.more.empty() {
		e.more = nil
	}
}

func (e *entry) setLease(owner, token string, until instant) {
	if owner == "" && token == "" && until == zeroInstant && e.more == nil {
		return
	}
	m := e.moreFields()
	m.leaseOwner, m.leaseToken, m.leaseUntil = owner, token, until
	e.tidy()
}

func (e *entry) clearLease() { e.setLease("", "", zeroInstant) }

func (e *entry) leaseToken() string {
	if e.more == nil {
		return ""
	}
	return e.more.leaseToken
}

func (e *entry) leaseUntil() instant {
	if e.more == nil {
		return zeroInstant
	}
	return e.more.leaseUntil
}

func (e *entry) setLastError(msg string) {
	if msg == "" && e.more == nil {
		return
	}
	e.moreFields().lastError = msg
	e.tidy()
}

// toJob rebuilds the domain.Job, without its payload.
func (e *entry) toJob() domain.Job {
	j := domain.Job{
		ID:         e.id,
		DedupeKey:  e.dedupeKey(),
		ActivityID: e.act.id,
		Inbox:      e.fullInbox(),
		Host:       e.hq.host,
		SenderID:   e.act.sender,
		KeyID:      e.act.keyID,
		BodyID:     e.act.bodyID,
		State:      e.state.domain(),
		Attempts:   int(e.attempts),
		RunAt:      e.runAt.time(),
		CreatedAt:  e.createdAt.time(),
		FinishedAt: e.finishedAt.time(),
	}
	if m := e.more; m != nil {
		j.LeaseOwner, j.LeaseToken, j.LeaseUntil = m.leaseOwner, m.leaseToken, m.leaseUntil.time()
		j.LastError = m.lastError
	}
	return j
}
