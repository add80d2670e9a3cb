package ports

import (
	"context"
	"time"

	"github.com/heraldfed/herald/domain"
)

// NameRegistry is the single username space of personas, groups, the
// instance actor and system names.
type NameRegistry interface {
	// Reserve inserts the name; domain.ErrNameTaken if it is taken. Of two
	// simultaneous reservations of one name exactly one succeeds.
	Reserve(ctx context.Context, n domain.ReservedName) error
	// Release deletes the reservation if it is held by ownerID (empty for a
	// system name); domain.ErrNotFound otherwise.
	Release(ctx context.Context, name, ownerID string) error
	// Get returns the reservation or domain.ErrNotFound.
	Get(ctx context.Context, name string) (domain.ReservedName, error)
	// List returns the reservations of one kind (every kind when empty), by
	// name, those of deleted actors included (DeletedAt set).
	List(ctx context.Context, kind domain.NameKind) ([]domain.ReservedName, error)

	// MarkDeleted records that the actor holding the name was deleted at
	// `at`: the reservation stays for good (Reserve of the name is
	// domain.ErrNameTaken, Release of it domain.ErrNotFound, whoever asks)
	// and Get and List return it with DeletedAt. domain.ErrNotFound unless
	// ownerID holds the name; marking it again keeps the first DeletedAt.
	MarkDeleted(ctx context.Context, name, ownerID string, at time.Time) error
}

// InstanceStore keeps the circuit breaker state of remote hosts.
type InstanceStore interface {
	// Get returns the host's state, or domain.ErrNotFound if it was never
	// recorded.
	Get(ctx context.Context, host string) (domain.RemoteInstance, error)
	// Update applies fn to the host's state (starting from
	// domain.NewRemoteInstance when none is stored) and stores the result
	// atomically with respect to other Updates of the same host, so
	// concurrent failures are all counted. fn may be called more than once.
	Update(ctx context.Context, host string, fn func(*domain.RemoteInstance)) (domain.RemoteInstance, error)
	// UpdateMany is Update for many hosts at once, in one transaction and a
	// fixed number of round trips where the store has them (the engine
	// records a whole batch of outcomes' breaker changes this way). fn is
	// applied to each distinct host's state (lower-cased; fn reads the host
	// from r.Host) atomically with respect to every other Update and
	// UpdateMany of that host, so concurrent changes are all counted;
	// concurrent callers never deadlock on each other. It returns the
	// stored states by host. fn may be called more than once per host.
	UpdateMany(ctx context.Context, hosts []string, fn func(*domain.RemoteInstance)) (map[string]domain.RemoteInstance, error)
	// List returns hosts by name; only quarantined ones (at now) if
	// quarantinedAt is not zero.
	List(ctx context.Context, quarantinedAt time.Time) ([]domain.RemoteInstance, error)
}

// FollowerStore keeps follow relations, unique by (follower, followed).
type FollowerStore interface {
	// Add inserts the relation; if one exists for the pair it is kept as it
	// is and created is false.
	Add(ctx context.Context, f domain.Follower) (created bool, err error)
	// Get returns the relation or domain.ErrNotFound.
	Get(ctx context.Context, followerURI, followedURI string) (domain.Follower, error)
	// SetState changes the state; domain.ErrNotFound if there is no such
	// relation.
	SetState(ctx context.Context, followerURI, followedURI string, s domain.FollowState, at time.Time) error
	// Remove deletes the relation; domain.ErrNotFound if there was none.
	Remove(ctx context.Context, followerURI, followedURI string) error
	// RemoveActor deletes every relation the actor is on either side of.
	RemoveActor(ctx context.Context, actorURI string) (int, error)
	// Followers lists who follows followedURI in state s, ordered by
	// follower URI, after the given URI (for paging), at most limit.
	Followers(ctx context.Context, followedURI string, s domain.FollowState, afterURI string, limit int) ([]domain.Follower, error)
	// FollowerURIs is Followers' follower URIs alone, in the same order
	// and pages: what a fan-out reads, which a store can answer from its
	// (followed, state, follower) index without reading the relations.
	FollowerURIs(ctx context.Context, followedURI string, s domain.FollowState, afterURI string, limit int) ([]string, error)
	// CountFollowers counts who follows followedURI in state s.
	CountFollowers(ctx context.Context, followedURI string, s domain.FollowState) (int, error)

	// FollowedURIs lists whom followerURI follows or asked to follow (any
	// state), ordered by followed URI, after afterURI, at most limit: the
	// actors whose servers a deleted persona's Delete also goes to.
	FollowedURIs(ctx context.Context, followerURI, afterURI string, limit int) ([]string, error)
}

// UserStore keeps login accounts.
type UserStore interface {
	// CreateUser inserts; domain.ErrNameTaken if the user name exists.
	CreateUser(ctx context.Context, u domain.RootUser) error
	UserByName(ctx context.Context, userName string) (domain.RootUser, error)
	UserByID(ctx context.Context, id string) (domain.RootUser, error)
	// DeleteUser removes a user (undoing a sign-up that failed half way,
	// or a sign-up the operator rejected).
	DeleteUser(ctx context.Context, id string) error
	// SetUserStatus changes an account's status (approving a sign-up);
	// domain.ErrNotFound if there is no such user.
	SetUserStatus(ctx context.Context, id string, s domain.UserStatus) error
	// UsersByStatus lists the accounts in status s, oldest first (by
	// CreatedAt, then ID), at most limit. An account stored before
	// statuses existed is active.
	UsersByStatus(ctx context.Context, s domain.UserStatus, limit int) ([]domain.RootUser, error)
}

// TokenStore keeps bearer tokens, by hash.
type TokenStore interface {
	CreateToken(ctx context.Context, t domain.Token) error
	// TokenByHash returns the token or domain.ErrNotFound.
	TokenByHash(ctx context.Context, hash string) (domain.Token, error)
	// RevokeToken deletes it; domain.ErrNotFound if there was none.
	RevokeToken(ctx context.Context, hash string) error
}

// ActorStore keeps local actors: personas (and the instance actor) and
// groups. Names were reserved in the NameRegistry before.
type ActorStore interface {
	CreateAvatar(ctx context.Context, a domain.Avatar) error
	AvatarByName(ctx context.Context, name string) (domain.Avatar, error)
	AvatarByID(ctx context.Context, id string) (domain.Avatar, error)
	// AvatarsOf lists a user's personas by name.
	AvatarsOf(ctx context.Context, rootUserID string) ([]domain.Avatar, error)
	DeleteAvatar(ctx context.Context, id string) error
	// TouchAvatars records that the avatars with these ids were active at
	// at (their account signed in, or they posted): the stored last
	// activity becomes the later of it and at. Unknown ids are skipped.
	TouchAvatars(ctx context.Context, ids []string, at time.Time) error
	// CountPersonas counts personas (avatars with an owner: the instance
	// actor is none, nor is a group) last active at or after activeSince;
	// a zero activeSince counts them all, active or not.
	CountPersonas(ctx context.Context, activeSince time.Time) (int, error)
	CreateGroup(ctx context.Context, g domain.Group) error
	GroupByName(ctx context.Context, name string) (domain.Group, error)
	GroupByID(ctx context.Context, id string) (domain.Group, error)
	DeleteGroup(ctx context.Context, id string) error

	// RetireAvatar marks a persona deleted at `at` (its Delete is about to
	// go out): from then on AvatarByName, AvatarsOf and CountPersonas pass
	// it over and TouchAvatars leaves it alone, while AvatarByID still
	// returns it, with DeletedAt, so the deliveries of its Delete can be
	// signed with its key until DeleteAvatar removes it. Retiring it again
	// keeps the first DeletedAt; domain.ErrNotFound if there is no such
	// avatar.
	RetireAvatar(ctx context.Context, id string, at time.Time) error
	// RetiredAvatars lists the retired avatars not yet removed, by id,
	// after afterID (for paging), at most limit: the deletions still to
	// finish.
	RetiredAvatars(ctx context.Context, afterID string, limit int) ([]domain.Avatar, error)

	// The settings of a persona or group its owner changes after
	// creation. Each returns domain.ErrNotFound when there is no avatar
	// (group) with that id.

	// SetAvatarLocked sets whether the avatar approves its followers by
	// hand (domain.Avatar.Locked).
	SetAvatarLocked(ctx context.Context, id string, locked bool) error
	// SetGroupLocked is SetAvatarLocked for a group.
	SetGroupLocked(ctx context.Context, id string, locked bool) error
	// SetAvatarProfile sets the avatar's display name and bio
	// (domain.Avatar.DisplayName, Note), both at once.
	SetAvatarProfile(ctx context.Context, id, displayName, note string) error
	// SetAvatarKeys replaces the avatar's key pair (a key rotation at
	// at): in one atomic write the pair it had becomes its PreviousKeys,
	// keys its Keys, and at its KeysRotatedAt.
	SetAvatarKeys(ctx context.Context, id string, keys domain.KeyPair, at time.Time) error
	// SetGroupKeys is SetAvatarKeys for a group.
	SetGroupKeys(ctx context.Context, id string, keys domain.KeyPair, at time.Time) error
}

// ForeignActorStore caches remote actors.
type ForeignActorStore interface {
	// Upsert stores the actor, replacing any copy with the same ActorURI.
	// A key id belongs to at most one actor (SPEC §10): when another
	// actor's copy holds f.PublicKeyID, Upsert changes nothing and returns
	// an error wrapping domain.ErrAlreadyExists. The store enforces it (a
	// unique index where it has them), so two concurrent claims of one key
	// id cannot both succeed.
	Upsert(ctx context.Context, f domain.ForeignAvatar) error
	ByActorURI(ctx context.Context, actorURI string) (domain.ForeignAvatar, error)
	// ByKeyID finds the actor whose public key has this id.
	ByKeyID(ctx context.Context, keyID string) (domain.ForeignAvatar, error)
	// OnDomain lists the URIs of the cached actors whose Host the domain
	// d covers (domain.DomainCovers: d and its subdomains, any port), in
	// URI order after afterURI, at most limit: whom a suspension of d
	// removes the follows of.
	OnDomain(ctx context.Context, d, afterURI string, limit int) ([]string, error)
	// InboxesOf returns the inboxes of the cached actors among uris
	// (missing ones are left out), each actor once, in the order of uris,
	// in one round trip: what a fan-out reads for a page of followers.
	InboxesOf(ctx context.Context, uris []string) ([]domain.ActorInboxes, error)
	Delete(ctx context.Context, actorURI string) error
}

// PostStore keeps notes, unique by ObjectURI.
type PostStore interface {
	// CreatePost inserts; if a post with that ObjectURI exists it is kept
	// and created is false (an inbox may receive the same Create twice).
	// Reusing the ID of another post is domain.ErrAlreadyExists.
	CreatePost(ctx context.Context, p domain.Post) (created bool, err error)
	PostByObjectURI(ctx context.Context, objectURI string) (domain.Post, error)
	// PostByID returns the post (not a direct post) of that ID, or
	// domain.ErrNotFound: the client API names statuses by their IDs.
	PostByID(ctx context.Context, id string) (domain.Post, error)
	// PostsByAuthor lists newest first, published before `before` (zero:
	// no bound), at most limit.
	PostsByAuthor(ctx context.Context, authorURI string, before time.Time, limit int) ([]domain.Post, error)
	PostsByGroup(ctx context.Context, groupURI string, before time.Time, limit int) ([]domain.Post, error)
	// PostsByAuthors is PostsByAuthor for the posts of any of authorURIs
	// (at most MaxAuthors), merged newest first: what a home timeline
	// reads, one query for the authors a persona follows.
	PostsByAuthors(ctx context.Context, authorURIs []string, before time.Time, limit int) ([]domain.Post, error)
	// Replies lists the posts (not direct posts) whose InReplyTo is
	// objectURI, oldest first (by Published, then ObjectURI), at most
	// limit: a thread's descendants, a level at a time.
	Replies(ctx context.Context, objectURI string, limit int) ([]domain.Post, error)
	// PublicPosts lists the public posts (not followers-only nor direct)
	// as PostsByAuthor: all of them (origin OriginAll), those written here
	// (OriginLocal, Local) or those received (OriginRemote).
	PublicPosts(ctx context.Context, origin Origin, before time.Time, limit int) ([]domain.Post, error)
	// PostsMentioning lists the posts (not direct posts) whose Mentions
	// hold actorURI, as PostsByAuthor. CreatePost stores a post's Mentions
	// with it, in the same write; every read of a post returns them.
	PostsMentioning(ctx context.Context, actorURI string, before time.Time, limit int) ([]domain.Post, error)
	// DeletePost removes a post or a DM by ObjectURI; domain.ErrNotFound
	// if neither exists.
	DeletePost(ctx context.Context, objectURI string) error
	// UpdateContent replaces the content and the extras of the post or
	// direct post with that ObjectURI (but its poll, which only PollStore
	// changes) and sets its Updated, if updated is later than its last
	// edit (its Published when never edited); changed is false otherwise,
	// so a repeated or out-of-order Update changes nothing. A post's
	// hashtags are listed by PostsTagged as they are after the edit.
	// domain.ErrNotFound if neither exists.
	UpdateContent(ctx context.Context, objectURI, content string, e domain.Extras, updated time.Time) (changed bool, err error)
	// PostsTagged lists the public posts (not followers-only nor direct)
	// whose Hashtags hold tag (normalized, domain.NormalizeHashtag), as
	// PostsByAuthor, from an index CreatePost and UpdateContent keep in
	// the same write as the post.
	PostsTagged(ctx context.Context, tag string, before time.Time, limit int) ([]domain.Post, error)
	// AddReaction records a Like or Announce of a post (not of a direct
	// post), once per (post, actor, kind): created is false if it was
	// already recorded. domain.ErrNotFound if there is no such post.
	AddReaction(ctx context.Context, r domain.Reaction) (created bool, err error)
	// RemoveReaction forgets one (an Undo); domain.ErrNotFound if none.
	RemoveReaction(ctx context.Context, objectURI, actorURI string, kind domain.ReactionKind) error
	// ReactedTo returns what actorURI did to any of objectURIs (at most
	// MaxReactedTo): its Likes and Announces recorded as reactions
	// (AddReaction), and its boosts (AddBoost) as Announces, in no given
	// order, a kind once per post; ObjectURI, ActorURI and Kind set (not
	// CreatedAt). What a client API reads to tell a viewer what it
	// favourited and reblogged in a page of posts.
	ReactedTo(ctx context.Context, actorURI string, objectURIs []string) ([]domain.Reaction, error)
	// CountReactions counts a post's reactions by kind (kinds without any
	// are absent or zero).
	CountReactions(ctx context.Context, objectURI string) (map[domain.ReactionKind]int, error)
	// AddBoost records an actor's Announce of a post (not of a direct
	// post), once per (actor, post): created is false if that actor's
	// boost of that post is already recorded (the first is kept).
	// domain.ErrNotFound if there is no such post. DeletePost removes a
	// post's boosts with it.
	AddBoost(ctx context.Context, b domain.Boost) (created bool, err error)
	// RemoveBoost forgets the actor's boost whose Announce id or boosted
	// post is uri (an Undo names either) and returns it;
	// domain.ErrNotFound if there is none.
	RemoveBoost(ctx context.Context, actorURI, uri string) (domain.Boost, error)
	// BoostsBy lists an actor's boosts newest first (by CreatedAt, then
	// ObjectURI), made before `before` (zero: no bound), at most limit.
	BoostsBy(ctx context.Context, actorURI string, before time.Time, limit int) ([]domain.Boost, error)
	// BoostsByActors is BoostsBy for the boosts of any of actorURIs (at
	// most MaxAuthors), merged newest first.
	BoostsByActors(ctx context.Context, actorURIs []string, before time.Time, limit int) ([]domain.Boost, error)
	// CreateDm is CreatePost for direct posts.
	CreateDm(ctx context.Context, p domain.DmPost) (created bool, err error)
	DmByObjectURI(ctx context.Context, objectURI string) (domain.DmPost, error)
	// DmByID returns the direct post of that id (its primary key).
	DmByID(ctx context.Context, id string) (domain.DmPost, error)
	// DmThread lists a thread newest first, as PostsByAuthor.
	DmThread(ctx context.Context, participantsKey string, before time.Time, limit int) ([]domain.DmPost, error)
	// CountLocalPosts counts the posts and direct posts written here
	// (Local), not the remote ones received.
	CountLocalPosts(ctx context.Context) (int, error)
	// DeleteActorContent removes what a remote actor left here, after its
	// Delete{Person}: its posts and direct posts (with their reactions and
	// boosts, as DeletePost), its boosts and its reactions. It returns how
	// many posts and direct posts went. Nothing of other actors changes.
	DeleteActorContent(ctx context.Context, actorURI string) (int, error)
}

// MaxAuthors bounds the actors one PostsByAuthors or BoostsByActors reads.
const MaxAuthors = 1000

// Origin selects posts by where they were written (PostStore.PublicPosts).
type Origin string

const (
	OriginAll    Origin = ""
	OriginLocal  Origin = "local"
	OriginRemote Origin = "remote"
)

// MaxReactedTo bounds the posts one PostStore.ReactedTo asks about.
const MaxReactedTo = 100

// PollStore keeps what changes in a post's poll after it is stored: the
// votes of polls written here, counted once per voter and option, and the
// counts of remote polls as their author's Updates say. Every post store
// implements it on the same data (a post's poll is read with the post).
type PollStore interface {
	// AddVotes records voterURI's votes for options in the poll of the
	// post objectURI, at `at`: each option once per voter, and in a
	// single-choice poll one vote per voter (of concurrent votes exactly
	// one is recorded: a unique key decides). For a post written here
	// (Local) it then counts the poll again from its votes, stores the
	// counts with the post and marks the poll changed (PollsDue), in the
	// same write; a remote poll's counts are its author's (SetPoll), so
	// its votes are only recorded (a persona's own). It returns the poll
	// as stored and how many votes it recorded. domain.ErrNotFound if
	// there is no post with a poll of that URI. Options are not checked
	// against the poll's: the caller did.
	AddVotes(ctx context.Context, objectURI, voterURI string, options []string, at time.Time) (domain.Poll, int, error)
	// VotesOf lists the options voterURI voted for in the poll, in the
	// order voted.
	VotesOf(ctx context.Context, objectURI, voterURI string) ([]string, error)
	// Voters lists who voted in the poll, each once, by URI after
	// afterURI (for paging), at most limit: whom its Updates go to
	// besides its author's followers.
	Voters(ctx context.Context, objectURI, afterURI string, limit int) ([]string, error)
	// SetPoll replaces the poll of a remote post (its author's
	// Update{Question}), unless the stored poll is closed and p is not (a
	// late Update does not reopen it): changed reports whether it did.
	// domain.ErrNotFound if there is no post with a poll of that URI.
	SetPoll(ctx context.Context, objectURI string, p domain.Poll) (changed bool, err error)
	// PollsDue lists the polls written here that their followers must
	// hear of at now, at most limit, by end time: those whose end time
	// passed and that are not closed yet (Expired), and those with votes
	// since the last TakePollChange (Changed).
	PollsDue(ctx context.Context, now time.Time, limit int) ([]domain.PollDue, error)
	// TakePollChange clears the poll's changed mark: true for the one
	// caller that cleared it (another process may race for it), false
	// when it was clear already.
	TakePollChange(ctx context.Context, objectURI string) (bool, error)
	// ClosePoll closes the poll at `at`: it is counted again from its
	// votes, Closed set, and it leaves PollsDue; no vote is recorded after
	// it. closed is true for the one caller that closed it. It returns the
	// poll as stored. domain.ErrNotFound if there is no post with a poll.
	ClosePoll(ctx context.Context, objectURI string, at time.Time) (p domain.Poll, closed bool, err error)
}

// TombstoneStore remembers the URIs of deleted remote objects and actors.
type TombstoneStore interface {
	// AddTombstone records t; a tombstone of the same URI already there is
	// kept as it is (the first deletion stands).
	AddTombstone(ctx context.Context, t domain.Tombstone) error
	// Tombstoned returns the tombstone of uri, or domain.ErrNotFound.
	Tombstoned(ctx context.Context, uri string) (domain.Tombstone, error)
}

// Pinger reports whether the store answers; /readyz uses it.
type Pinger interface {
	Ping(ctx context.Context) error
}

// BlockStore keeps actors' blocks and mutes of other actors (SPEC §11
// "Personas"), unique by (actor, target, kind). Every read is an indexed
// lookup by the actor (and target): the inbox asks one question per
// activity that concerns a persona, never one per follower (a blocked
// actor has no follow relation with its blocker, so a fan-out, which
// reads the followers, skips it already).
type BlockStore interface {
	// AddBlock inserts b; if the actor already blocks (or mutes) the
	// target, the stored one is kept and created is false.
	AddBlock(ctx context.Context, b domain.ActorBlock) (created bool, err error)
	// RemoveBlock deletes the actor's block or mute of target and returns
	// it; domain.ErrNotFound if there was none.
	RemoveBlock(ctx context.Context, actorURI, targetURI string, kind domain.BlockKind) (domain.ActorBlock, error)
	// Between returns the blocks and mutes of b by a and of a by b (at
	// most four), in one round trip.
	Between(ctx context.Context, a, b string) ([]domain.ActorBlock, error)
	// BlocksBy lists the actor's blocks (or mutes) ordered by target URI,
	// after afterURI (for paging), at most limit.
	BlocksBy(ctx context.Context, actorURI string, kind domain.BlockKind, afterURI string, limit int) ([]domain.ActorBlock, error)
	// OfTargets returns the actor's blocks and mutes of any of targets,
	// in one round trip (what a read filters a page of posts with).
	OfTargets(ctx context.Context, actorURI string, targets []string) ([]domain.ActorBlock, error)
}
