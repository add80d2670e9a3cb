package mongo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var (
	_ ports.UserStore  = (*AccountStore)(nil)
	_ ports.TokenStore = (*AccountStore)(nil)
	_ ports.ActorStore = (*AccountStore)(nil)
)

// AccountStore keeps root users, their tokens and local actors (avatars and
// groups), one collection each.
type AccountStore struct {
	users, tokens, avatars, groups *mongodrv.Collection
}

// NewAccountStore returns the store of db.
func NewAccountStore(db *mongodrv.Database) *AccountStore {
	return &AccountStore{
		users:   collection(db, collRootUsers),
		tokens:  collection(db, collTokens),
		avatars: collection(db, collAvatars),
		groups:  collection(db, collGroups),
	}
}

// userDoc's status is absent on the accounts stored before statuses
// existed, which are active.
type userDoc struct {
	ID           string    `bson:"_id"`
	UserName     string    `bson:"userName"`
	PasswordHash string    `bson:"passwordHash"`
	CreatedAt    time.Time `bson:"createdAt,omitempty"`
	Status       string    `bson:"status,omitempty"`
	Reason       string    `bson:"reason,omitempty"`
}

type tokenDoc struct {
	Hash      string    `bson:"_id"`
	UserID    string    `bson:"userId"`
	CreatedAt time.Time `bson:"createdAt,omitempty"`
}

// avatarDoc has no rootUserId for the instance actor, which is nobody's.
type avatarDoc struct {
	ID            string    `bson:"_id"`
	RootUserID    string    `bson:"rootUserId,omitempty"`
	Name          string    `bson:"name"`
	DisplayName   string    `bson:"displayName,omitempty"`
	PublicKeyPEM  string    `bson:"publicKeyPem"`
	PrivateKeyPEM string    `bson:"privateKeyPem"`
	CreatedAt     time.Time `bson:"createdAt,omitempty"`
	// DeletedAt is absent while the persona lives (avatars_retired is
	// sparse on it).
	DeletedAt time.Time `bson:"deletedAt,omitempty"`
	Locked    bool      `bson:"locked,omitempty"`
	// The key pair before the last rotation, and when it was rotated.
	PreviousPublicKeyPEM  string    `bson:"previousPublicKeyPem,omitempty"`
	PreviousPrivateKeyPEM string    `bson:"previousPrivateKeyPem,omitempty"`
	KeysRotatedAt         time.Time `bson:"keysRotatedAt,omitempty"`
	// Note is the bio, plain text (absent reads as empty).
	Note string `bson:"note,omitempty"`
}

type groupDoc struct {
	ID            string    `bson:"_id"`
	OwnerID       string    `bson:"ownerId"`
	Name          string    `bson:"name"`
	DisplayName   string    `bson:"displayName,omitempty"`
	PublicKeyPEM  string    `bson:"publicKeyPem"`
	PrivateKeyPEM string    `bson:"privateKeyPem"`
	CreatedAt     time.Time `bson:"createdAt,omitempty"`
	Locked        bool      `bson:"locked,omitempty"`
	// The key pair before the last rotation, and when it was rotated.
	PreviousPublicKeyPEM  string    `bson:"previousPublicKeyPem,omitempty"`
	PreviousPrivateKeyPEM string    `bson:"previousPrivateKeyPem,omitempty"`
	KeysRotatedAt         time.Time `bson:"keysRotatedAt,omitempty"`
}

func (d userDoc) user() domain.RootUser {
	u := domain.RootUser{ID: d.ID, UserName: d.UserName, PasswordHash: d.PasswordHash, CreatedAt: d.CreatedAt,
		Status: domain.UserStatus(d.Status), Reason: d.Reason}
	if u.Status == "" {
		u.Status = domain.UserActive
	}
	return u
}

func (d avatarDoc) avatar() domain.Avatar {
	return domain.Avatar{ID: d.ID, RootUserID: d.RootUserID, Name: d.Name, DisplayName: d.DisplayName,
		Keys: domain.KeyPair{PublicPEM: d.PublicKeyPEM, PrivatePEM: d.PrivateKeyPEM}, CreatedAt: d.CreatedAt, DeletedAt: d.DeletedAt, Locked: d.Locked,
		PreviousKeys: domain.KeyPair{PublicPEM: d.PreviousPublicKeyPEM, PrivatePEM: d.PreviousPrivateKeyPEM}, KeysRotatedAt: utc(d.KeysRotatedAt),
		Note: d.Note}
}

// live matches the avatars that are not retired.
var live = bson.E{Key: "deletedAt", Value: bson.D{{Key: "$exists", Value: false}}}

func (d groupDoc) group() domain.Group {
	return domain.Group{ID: d.ID, OwnerID: d.OwnerID, Name: d.Name, DisplayName: d.DisplayName,
		Keys: domain.KeyPair{PublicPEM: d.PublicKeyPEM, PrivatePEM: d.PrivateKeyPEM}, CreatedAt: d.CreatedAt, Locked: d.Locked,
		PreviousKeys: domain.KeyPair{PublicPEM: d.PreviousPublicKeyPEM, PrivatePEM: d.PreviousPrivateKeyPEM}, KeysRotatedAt: utc(d.KeysRotatedAt)}
}

// What a duplicate key means in each collection. A duplicate user name is
// ErrNameTaken; a duplicate id is ErrAlreadyExists. Where the server names
// no index (FerretDB), or names one that does not settle it, the store looks
// it up, checking in the memory adapter's order: the user name before the
// id for users, the id before the name for avatars and groups.
var (
	userDups  = &dupRules{byIndex: map[string]error{idxRootUsersUserName: domain.ErrNameTaken}, other: errDupUnnamed}
	actorDups = &dupRules{byIndex: map[string]error{"_id_": domain.ErrAlreadyExists}, other: errDupUnnamed}
	tokenDups = &dupRules{other: domain.ErrAlreadyExists}
)

// settleDup settles an errDupUnnamed by a lookup: ifFound when a document
// matches lookup, otherwise otherwise. Any other error passes unchanged.
func settleDup(ctx context.Context, err error, c *mongodrv.Collection, lookup bson.D, ifFound, otherwise error) error {
	if !errors.Is(err, errDupUnnamed) {
		return err
	}
	n, cerr := c.CountDocuments(ctx, lookup, options.Count().SetLimit(1))
	if cerr != nil {
		return fmt.Errorf("%w (and the lookup that would say which key failed: %v)", err, interpretError(cerr, nil))
	}
	if n > 0 {
		return fmt.Errorf("%w: %w", ifFound, err)
	}
	return fmt.Errorf("%w: %w", otherwise, err)
}

// CreateUser implements ports.UserStore.
func (s *AccountStore) CreateUser(ctx context.Context, u domain.RootUser) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	st, err := ports.StoredStatus(u.Status)
	if err != nil {
		return err
	}
	err = insertOne(ctx, s.users, userDoc{ID: u.ID, UserName: u.UserName, PasswordHash: u.PasswordHash, CreatedAt: utc(u.CreatedAt),
		Status: string(st), Reason: u.Reason})
	if err == nil {
		return nil
	}
	err = settleDup(ctx, interpretError(err, userDups), s.users,
		bson.D{{Key: "userName", Value: u.UserName}}, domain.ErrNameTaken, domain.ErrAlreadyExists)
	return fmt.Errorf("user %q (%s): %w", u.UserName, u.ID, err)
}

// UserByName implements ports.UserStore.
func (s *AccountStore) UserByName(ctx context.Context, name string) (domain.RootUser, error) {
	return s.findUser(ctx, bson.D{{Key: "userName", Value: name}}, name)
}

// UserByID implements ports.UserStore.
func (s *AccountStore) UserByID(ctx context.Context, id string) (domain.RootUser, error) {
	return s.findUser(ctx, bson.D{{Key: "_id", Value: id}}, id)
}

func (s *AccountStore) findUser(ctx context.Context, filter bson.D, what string) (domain.RootUser, error) {
	var d userDoc
	if err := s.users.FindOne(ctx, filter).Decode(&d); err != nil {
		return domain.RootUser{}, fmt.Errorf("user %q: %w", what, interpretError(err, nil))
	}
	return d.user(), nil
}

// DeleteUser implements ports.UserStore.
func (s *AccountStore) DeleteUser(ctx context.Context, id string) error {
	return deleteByID(ctx, s.users, "user", id)
}

func deleteByID(ctx context.Context, c *mongodrv.Collection, what, id string) error {
	res, err := c.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
	if err != nil {
		return fmt.Errorf("%s %q: %w", what, id, interpretError(err, nil))
	}
	if res.DeletedCount == 0 {
		return fmt.Errorf("%s %q: %w", what, id, domain.ErrNotFound)
	}
	return nil
}

// SetUserStatus implements ports.UserStore.
func (s *AccountStore) SetUserStatus(ctx context.Context, id string, st domain.UserStatus) error {
	res, err := s.users.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: string(st)}}}})
	if err != nil {
		return fmt.Errorf("status of user %q: %w", id, interpretError(err, nil))
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("user %q: %w", id, domain.ErrNotFound)
	}
	return nil
}

// UsersByStatus implements ports.UserStore along root_users_status_created.
// The active accounts are those whose status is "active" or absent (null
// matches an absent field, and the index holds it as null).
func (s *AccountStore) UsersByStatus(ctx context.Context, st domain.UserStatus, limit int) ([]domain.RootUser, error) {
	var status any = string(st)
	if st == domain.UserActive {
		status = bson.D{{Key: "$in", Value: bson.A{string(st), nil}}}
	}
	opts := options.Find().SetSort(bson.D{{Key: "createdAt", Value: 1}, {Key: "_id", Value: 1}})
	if limit > 0 {
		opts.SetLimit(int64(limit))
	}
	return findAll(ctx, s.users, bson.D{{Key: "status", Value: status}}, "users "+string(st), userDoc.user, opts)
}

// CreateToken implements ports.TokenStore.
func (s *AccountStore) CreateToken(ctx context.Context, t domain.Token) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := insertOne(ctx, s.tokens, tokenDoc{Hash: t.Hash, UserID: t.UserID, CreatedAt: utc(t.CreatedAt)})
	if err != nil {
		return fmt.Errorf("token: %w", interpretError(err, tokenDups))
	}
	return nil
}

// TokenByHash implements ports.TokenStore.
func (s *AccountStore) TokenByHash(ctx context.Context, hash string) (domain.Token, error) {
	var d tokenDoc
	if err := s.tokens.FindOne(ctx, bson.D{{Key: "_id", Value: hash}}).Decode(&d); err != nil {
		return domain.Token{}, fmt.Errorf("token: %w", interpretError(err, nil))
	}
	return domain.Token{Hash: d.Hash, UserID: d.UserID, CreatedAt: d.CreatedAt}, nil
}

// RevokeToken implements ports.TokenStore.
func (s *AccountStore) RevokeToken(ctx context.Context, hash string) error {
	res, err := s.tokens.DeleteOne(ctx, bson.D{{Key: "_id", Value: hash}})
	if err != nil {
		return fmt.Errorf("token: %w", interpretError(err, nil))
	}
	if res.DeletedCount == 0 {
		return fmt.Errorf("token: %w", domain.ErrNotFound)
	}
	return nil
}

// CreateAvatar implements ports.ActorStore.
func (s *AccountStore) CreateAvatar(ctx context.Context, a domain.Avatar) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := insertOne(ctx, s.avatars, avatarDoc{ID: a.ID, RootUserID: a.RootUserID, Name: a.Name, DisplayName: a.DisplayName,
		PublicKeyPEM: a.Keys.PublicPEM, PrivateKeyPEM: a.Keys.PrivatePEM, CreatedAt: utc(a.CreatedAt), Locked: a.Locked,
		PreviousPublicKeyPEM: a.PreviousKeys.PublicPEM, PreviousPrivateKeyPEM: a.PreviousKeys.PrivatePEM, KeysRotatedAt: utc(a.KeysRotatedAt),
		Note: a.Note})
	if err == nil {
		return nil
	}
	err = settleDup(ctx, interpretError(err, actorDups), s.avatars,
		bson.D{{Key: "_id", Value: a.ID}}, domain.ErrAlreadyExists, domain.ErrNameTaken)
	return fmt.Errorf("avatar %q (%s): %w", a.Name, a.ID, err)
}

// AvatarByName implements ports.ActorStore.
func (s *AccountStore) AvatarByName(ctx context.Context, name string) (domain.Avatar, error) {
	return s.findAvatar(ctx, bson.D{{Key: "name", Value: name}, live}, name)
}

// AvatarByID implements ports.ActorStore.
func (s *AccountStore) AvatarByID(ctx context.Context, id string) (domain.Avatar, error) {
	return s.findAvatar(ctx, bson.D{{Key: "_id", Value: id}}, id)
}

func (s *AccountStore) findAvatar(ctx context.Context, filter bson.D, what string) (domain.Avatar, error) {
	var d avatarDoc
	if err := s.avatars.FindOne(ctx, filter).Decode(&d); err != nil {
		return domain.Avatar{}, fmt.Errorf("avatar %q: %w", what, interpretError(err, nil))
	}
	return d.avatar(), nil
}

// AvatarsOf implements ports.ActorStore, along avatars_root_to_avatar.
func (s *AccountStore) AvatarsOf(ctx context.Context, rootUserID string) ([]domain.Avatar, error) {
	if rootUserID == "" {
		return nil, nil // the instance actor is nobody's
	}
	return findAll(ctx, s.avatars, bson.D{{Key: "rootUserId", Value: rootUserID}, live}, fmt.Sprintf("avatars of %q", rootUserID), avatarDoc.avatar, options.Find().SetSort(bson.D{{Key: "name", Value: 1}}))
}

// DeleteAvatar implements ports.ActorStore.
func (s *AccountStore) DeleteAvatar(ctx context.Context, id string) error {
	return deleteByID(ctx, s.avatars, "avatar", id)
}

// TouchAvatars implements ports.ActorStore: one UpdateMany, $max keeping
// the later activity. The field lastActiveAt is absent until the first.
func (s *AccountStore) TouchAvatars(ctx context.Context, ids []string, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.avatars.UpdateMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}, live},
		bson.D{{Key: "$max", Value: bson.D{{Key: "lastActiveAt", Value: utc(at)}}}})
	if err != nil {
		return fmt.Errorf("touch %d avatars: %w", len(ids), interpretError(err, nil))
	}
	return nil
}

// CountPersonas implements ports.ActorStore. A persona has a rootUserId
// (the instance actor has none): $gt "" matches strings only, so a missing
// field is not counted.
func (s *AccountStore) CountPersonas(ctx context.Context, activeSince time.Time) (int, error) {
	filter := bson.D{{Key: "rootUserId", Value: bson.D{{Key: "$gt", Value: ""}}}, live}
	if !activeSince.IsZero() {
		filter = append(filter, bson.E{Key: "lastActiveAt", Value: bson.D{{Key: "$gte", Value: utc(activeSince)}}})
	}
	n, err := s.avatars.CountDocuments(ctx, filter)
	if err != nil {
		return 0, fmt.Errorf("count personas: %w", interpretError(err, nil))
	}
	return int(n), nil
}

// RetireAvatar implements ports.ActorStore. The first retirement stands:
// the update matches only an avatar without deletedAt, and when it matches
// none, a look-up tells a retired avatar from a missing one.
func (s *AccountStore) RetireAvatar(ctx context.Context, id string, at time.Time) error {
	res, err := s.avatars.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, live},
		bson.D{{Key: "$set", Value: bson.D{{Key: "deletedAt", Value: utc(at)}}}})
	if err != nil {
		return fmt.Errorf("retire avatar %q: %w", id, interpretError(err, nil))
	}
	if res.MatchedCount > 0 {
		return nil
	}
	n, err := s.avatars.CountDocuments(ctx, bson.D{{Key: "_id", Value: id}})
	if err != nil {
		return fmt.Errorf("retire avatar %q: %w", id, interpretError(err, nil))
	}
	if n == 0 {
		return fmt.Errorf("avatar %q: %w", id, domain.ErrNotFound)
	}
	return nil
}

// RetiredAvatars implements ports.ActorStore: the sparse avatars_retired
// holds the retired ones alone (few), sorted by id after it is read.
func (s *AccountStore) RetiredAvatars(ctx context.Context, afterID string, limit int) ([]domain.Avatar, error) {
	opts := options.Find().SetSort(bson.D{{Key: "_id", Value: 1}})
	if limit > 0 {
		opts.SetLimit(int64(limit))
	}
	filter := bson.D{{Key: "deletedAt", Value: bson.D{{Key: "$exists", Value: true}}}}
	if afterID != "" {
		filter = append(filter, bson.E{Key: "_id", Value: bson.D{{Key: "$gt", Value: afterID}}})
	}
	return findAll(ctx, s.avatars, filter, "retired avatars", avatarDoc.avatar, opts)
}

// CreateGroup implements ports.ActorStore.
func (s *AccountStore) CreateGroup(ctx context.Context, g domain.Group) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := insertOne(ctx, s.groups, groupDoc{ID: g.ID, OwnerID: g.OwnerID, Name: g.Name, DisplayName: g.DisplayName,
		PublicKeyPEM: g.Keys.PublicPEM, PrivateKeyPEM: g.Keys.PrivatePEM, CreatedAt: utc(g.CreatedAt), Locked: g.Locked,
		PreviousPublicKeyPEM: g.PreviousKeys.PublicPEM, PreviousPrivateKeyPEM: g.PreviousKeys.PrivatePEM, KeysRotatedAt: utc(g.KeysRotatedAt)})
	if err == nil {
		return nil
	}
	err = settleDup(ctx, interpretError(err, actorDups), s.groups,
		bson.D{{Key: "_id", Value: g.ID}}, domain.ErrAlreadyExists, domain.ErrNameTaken)
	return fmt.Errorf("group %q (%s): %w", g.Name, g.ID, err)
}

// GroupByName implements ports.ActorStore.
func (s *AccountStore) GroupByName(ctx context.Context, name string) (domain.Group, error) {
	return s.findGroup(ctx, bson.D{{Key: "name", Value: name}}, name)
}

// GroupByID implements ports.ActorStore.
func (s *AccountStore) GroupByID(ctx context.Context, id string) (domain.Group, error) {
	return s.findGroup(ctx, bson.D{{Key: "_id", Value: id}}, id)
}

func (s *AccountStore) findGroup(ctx context.Context, filter bson.D, what string) (domain.Group, error) {
	var d groupDoc
	if err := s.groups.FindOne(ctx, filter).Decode(&d); err != nil {
		return domain.Group{}, fmt.Errorf("group %q: %w", what, interpretError(err, nil))
	}
	return d.group(), nil
}

// DeleteGroup implements ports.ActorStore.
func (s *AccountStore) DeleteGroup(ctx context.Context, id string) error {
	return deleteByID(ctx, s.groups, "group", id)
}
