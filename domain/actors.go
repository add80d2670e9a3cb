package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// RootUser is a login account. It owns personas (Avatars) and groups.
type RootUser struct {
	ID           string
	UserName     string // normalized; unique
	PasswordHash string // bcrypt; never the password
	CreatedAt    time.Time
	// Status is UserActive, or UserPending while the operator has not
	// approved the sign-up; empty reads as active (accounts stored before
	// statuses existed).
	Status UserStatus
	// Reason is what the person wrote when asking to join (approval mode).
	Reason string
}

// Active reports whether the account may sign in.
func (u RootUser) Active() bool { return u.Status == "" || u.Status == UserActive }

// KeyPair is an actor's RSA-2048 key pair, PEM-encoded (PKIX public key,
// PKCS#8 private key). The private half never leaves the store except to sign.
type KeyPair struct {
	PublicPEM  string
	PrivatePEM string
}

// Valid reports whether both halves are present.
func (k KeyPair) Valid() bool {
	return strings.Contains(k.PublicPEM, "PUBLIC KEY") && strings.Contains(k.PrivatePEM, "PRIVATE KEY")
}

// Avatar is a local actor (persona) owned by a RootUser. The instance actor
// is an Avatar without an owner.
type Avatar struct {
	ID          string
	RootUserID  string // empty only for the instance actor
	Name        string // normalized, reserved first
	DisplayName string
	// Note is the persona's bio as its owner wrote it: plain text, never
	// HTML (CleanBio, at most MaxBioChars); RenderText makes the HTML
	// that the actor document and the client API show.
	Note      string
	Keys      KeyPair
	CreatedAt time.Time
	// DeletedAt is set once the persona is deleted (ports.ActorStore
	// RetireAvatar): it is then gone for every lookup but AvatarByID, which
	// still hands its key to the deliveries of its Delete until they are
	// settled and the avatar is removed.
	DeletedAt time.Time
	// Locked: follows wait for the owner's approval
	// (manuallyApprovesFollowers).
	Locked bool
	// PreviousKeys is the key pair before the last rotation (at
	// KeysRotatedAt), kept to sign the Update{Person} that announces the
	// new one.
	PreviousKeys  KeyPair
	KeysRotatedAt time.Time
}

// Group is a local group actor: posts addressed to it are announced to its
// followers.
type Group struct {
	ID          string
	OwnerID     string // the RootUser that created it
	Name        string // normalized, reserved first
	DisplayName string
	Keys        KeyPair
	CreatedAt   time.Time
	// Locked: follows (members) wait for the owner's approval
	// (manuallyApprovesFollowers). New groups are locked unless asked
	// otherwise: a group announces its members' posts to every member.
	Locked bool
	// PreviousKeys and KeysRotatedAt are as Avatar's.
	PreviousKeys  KeyPair
	KeysRotatedAt time.Time
}

// NewAvatar validates a persona. name must already be normalized.
func NewAvatar(id, rootUserID, name string, keys KeyPair, now time.Time) (Avatar, error) {
	if err := checkLocalActor(id, name, keys); err != nil {
		return Avatar{}, err
	}
	return Avatar{ID: id, RootUserID: rootUserID, Name: name, Keys: keys, CreatedAt: now.UTC()}, nil
}

// NewGroup validates a group. name must already be normalized.
func NewGroup(id, ownerID, name string, keys KeyPair, now time.Time) (Group, error) {
	if err := checkLocalActor(id, name, keys); err != nil {
		return Group{}, err
	}
	if ownerID == "" {
		return Group{}, fmt.Errorf("%w: a group needs an owner", ErrInvalidInput)
	}
	return Group{ID: id, OwnerID: ownerID, Name: name, Keys: keys, CreatedAt: now.UTC()}, nil
}

func checkLocalActor(id, name string, keys KeyPair) error {
	if id == "" {
		return fmt.Errorf("%w: actor id is empty", ErrInvalidInput)
	}
	if n, err := NormalizeName(name); err != nil {
		return err
	} else if n != name {
		return fmt.Errorf("%w: %q is not normalized", ErrInvalidName, name)
	}
	if !keys.Valid() {
		return fmt.Errorf("%w: actor %q has no key pair", ErrInvalidInput, name)
	}
	return nil
}

// ForeignAvatar is a cached remote actor, found by ActorURI or by the id of
// its public key (the keyId of the signatures it sends).
type ForeignAvatar struct {
	ActorURI          string // unique
	PublicKeyID       string // indexed
	PublicKeyPEM      string
	Inbox             string
	SharedInbox       string // empty when the actor offers none
	PreferredUsername string
	Host              string
	FetchedAt         time.Time
}

// ForeignAvatarTTL is how long a cached remote actor is trusted before it is
// fetched again (Mastodon refreshes remote accounts about daily).
const ForeignAvatarTTL = 24 * time.Hour

// Stale reports whether the cached copy should be fetched again.
func (f ForeignAvatar) Stale(now time.Time) bool {
	return now.Sub(f.FetchedAt) > ForeignAvatarTTL
}

// DeliveryInbox is where activities for this actor go: the shared inbox when
// the actor offers one, so one job serves every follower on that server.
func (f ForeignAvatar) DeliveryInbox() string { return f.Inboxes().DeliveryInbox() }

// OwnInbox is where an activity meant for this actor alone goes (a Follow,
// its answer): its own inbox, else the delivery inbox.
func (f ForeignAvatar) OwnInbox() string {
	if f.Inbox != "" {
		return f.Inbox
	}
	return f.DeliveryInbox()
}

// Inboxes is what a delivery needs of the actor.
func (f ForeignAvatar) Inboxes() ActorInboxes {
	return ActorInboxes{ActorURI: f.ActorURI, Inbox: f.Inbox, SharedInbox: f.SharedInbox}
}

// ActorInboxes is the part of a cached remote actor that a fan-out reads
// for each follower: where to deliver, without the actor's key (its PEM
// is most of a cached actor's bytes, and a fan-out to a million followers
// would read a million of them for nothing).
type ActorInboxes struct {
	ActorURI    string
	Inbox       string
	SharedInbox string // empty when the actor offers none
}

// DeliveryInbox is the shared inbox when the actor offers one, else its
// own.
func (a ActorInboxes) DeliveryInbox() string {
	if a.SharedInbox != "" {
		return a.SharedInbox
	}
	return a.Inbox
}

// Token is an opaque bearer token of a RootUser, stored as a hash so a copy
// of the database does not hand out sessions.
type Token struct {
	Hash      string // hex SHA-256 of the token
	UserID    string
	CreatedAt time.Time
}

// HashToken is how a bearer token is stored and looked up: hex SHA-256.
// Tokens carry 128 random bits, so a fast hash is enough (no salt or
// stretching is needed against guessing).
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
