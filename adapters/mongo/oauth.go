package mongo

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// The client API's collections (migration 013) and their indexes.
const (
	collOAuthApps   = "oauth_apps"
	collOAuthGrants = "oauth_grants"
	collOAuthTokens = "oauth_tokens"

	idxOAuthGrantsExpires = "oauth_grants_expires"
	idxOAuthTokensGrant   = "oauth_tokens_grant"
)

var _ ports.OAuthStore = (*OAuthStore)(nil)

// OAuthStore keeps the client API's applications (oauth_apps, _id the
// client id), grants (oauth_grants) and tokens (oauth_tokens), the last
// two with the hex SHA-256 of their secret as _id: the _id index keeps
// each unique.
type OAuthStore struct {
	apps, grants, tokens *mongodrv.Collection
}

// NewOAuthStore returns the store of db.
func NewOAuthStore(db *mongodrv.Database) *OAuthStore {
	return &OAuthStore{apps: collection(db, collOAuthApps), grants: collection(db, collOAuthGrants), tokens: collection(db, collOAuthTokens)}
}

type oauthAppDoc struct {
	ClientID     string    `bson:"_id"`
	ID           string    `bson:"id"`
	SecretHash   string    `bson:"secretHash"`
	Name         string    `bson:"name"`
	Website      string    `bson:"website,omitempty"`
	RedirectURIs []string  `bson:"redirectUris"`
	Scopes       []string  `bson:"scopes"`
	CreatedAt    time.Time `bson:"createdAt"`
}

type oauthGrantDoc struct {
	Hash            string    `bson:"_id"`
	Kind            string    `bson:"kind"`
	ClientID        string    `bson:"clientId"`
	UserID          string    `bson:"userId"`
	AvatarID        string    `bson:"avatarId,omitempty"`
	RedirectURI     string    `bson:"redirectUri"`
	Scopes          []string  `bson:"scopes"`
	Challenge       string    `bson:"challenge,omitempty"`
	ChallengeMethod string    `bson:"challengeMethod,omitempty"`
	CreatedAt       time.Time `bson:"createdAt"`
	ExpiresAt       time.Time `bson:"expiresAt"`
	UsedAt          time.Time `bson:"usedAt,omitempty"`
}

type oauthTokenDoc struct {
	Hash      string    `bson:"_id"`
	ClientID  string    `bson:"clientId"`
	UserID    string    `bson:"userId,omitempty"`
	AvatarID  string    `bson:"avatarId,omitempty"`
	Scopes    []string  `bson:"scopes"`
	GrantHash string    `bson:"grantHash,omitempty"`
	CreatedAt time.Time `bson:"createdAt"`
}

func scopesOf(s []string) domain.Scopes {
	if len(s) == 0 {
		return nil
	}
	return domain.Scopes(s)
}

// CreateApp implements ports.OAuthStore.
func (s *OAuthStore) CreateApp(ctx context.Context, a domain.OAuthApp) error {
	err := insertOne(ctx, s.apps, oauthAppDoc{ClientID: a.ClientID, ID: a.ID, SecretHash: a.SecretHash, Name: a.Name, Website: a.Website,
		RedirectURIs: a.RedirectURIs, Scopes: a.Scopes, CreatedAt: utc(a.CreatedAt)})
	if err != nil {
		return fmt.Errorf("application %s: %w", a.ClientID, interpretError(err, nil))
	}
	return nil
}

// AppByClientID implements ports.OAuthStore.
func (s *OAuthStore) AppByClientID(ctx context.Context, clientID string) (domain.OAuthApp, error) {
	var d oauthAppDoc
	if err := s.apps.FindOne(ctx, bson.D{{Key: "_id", Value: clientID}}).Decode(&d); err != nil {
		return domain.OAuthApp{}, fmt.Errorf("application %s: %w", clientID, interpretError(err, nil))
	}
	return domain.OAuthApp{ID: d.ID, ClientID: d.ClientID, SecretHash: d.SecretHash, Name: d.Name, Website: d.Website,
		RedirectURIs: d.RedirectURIs, Scopes: scopesOf(d.Scopes), CreatedAt: d.CreatedAt.UTC()}, nil
}

func (d oauthGrantDoc) grant() domain.OAuthGrant {
	return domain.OAuthGrant{Hash: d.Hash, Kind: domain.GrantKind(d.Kind), ClientID: d.ClientID, UserID: d.UserID, AvatarID: d.AvatarID,
		RedirectURI: d.RedirectURI, Scopes: scopesOf(d.Scopes), Challenge: d.Challenge, ChallengeMethod: d.ChallengeMethod,
		CreatedAt: d.CreatedAt.UTC(), ExpiresAt: d.ExpiresAt.UTC(), UsedAt: utc(d.UsedAt)}
}

// CreateGrant implements ports.OAuthStore.
func (s *OAuthStore) CreateGrant(ctx context.Context, g domain.OAuthGrant) error {
	err := insertOne(ctx, s.grants, oauthGrantDoc{Hash: g.Hash, Kind: string(g.Kind), ClientID: g.ClientID, UserID: g.UserID, AvatarID: g.AvatarID,
		RedirectURI: g.RedirectURI, Scopes: g.Scopes, Challenge: g.Challenge, ChallengeMethod: g.ChallengeMethod,
		CreatedAt: utc(g.CreatedAt), ExpiresAt: utc(g.ExpiresAt), UsedAt: utc(g.UsedAt)})
	if err != nil {
		return fmt.Errorf("grant: %w", interpretError(err, nil))
	}
	return nil
}

// UseGrant implements ports.OAuthStore: one findOneAndUpdate conditional
// on usedAt being absent marks it (a single-document write is atomic), and
// only when it matched nothing is the grant read as it is.
func (s *OAuthStore) UseGrant(ctx context.Context, hash string, at time.Time) (domain.OAuthGrant, bool, error) {
	var d oauthGrantDoc
	err := s.grants.FindOneAndUpdate(ctx,
		bson.D{{Key: "_id", Value: hash}, {Key: "usedAt", Value: bson.D{{Key: "$exists", Value: false}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "usedAt", Value: utc(at)}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&d)
	if err == nil {
		return d.grant(), true, nil
	}
	if err != mongodrv.ErrNoDocuments {
		return domain.OAuthGrant{}, false, fmt.Errorf("grant: %w", interpretError(err, nil))
	}
	if err := s.grants.FindOne(ctx, bson.D{{Key: "_id", Value: hash}}).Decode(&d); err != nil {
		return domain.OAuthGrant{}, false, fmt.Errorf("grant: %w", interpretError(err, nil))
	}
	return d.grant(), false, nil
}

// DeleteExpiredGrants implements ports.OAuthStore along oauth_grants_expires.
func (s *OAuthStore) DeleteExpiredGrants(ctx context.Context, before time.Time) (int, error) {
	res, err := s.grants.DeleteMany(ctx, bson.D{{Key: "expiresAt", Value: bson.D{{Key: "$lt", Value: utc(before)}}}})
	if err != nil {
		return 0, fmt.Errorf("expired grants: %w", interpretError(err, nil))
	}
	return int(res.DeletedCount), nil
}

// CreateToken implements ports.OAuthStore.
func (s *OAuthStore) CreateToken(ctx context.Context, t domain.OAuthToken) error {
	err := insertOne(ctx, s.tokens, oauthTokenDoc{Hash: t.Hash, ClientID: t.ClientID, UserID: t.UserID, AvatarID: t.AvatarID,
		Scopes: t.Scopes, GrantHash: t.GrantHash, CreatedAt: utc(t.CreatedAt)})
	if err != nil {
		return fmt.Errorf("token: %w", interpretError(err, nil))
	}
	return nil
}

// TokenByHash implements ports.OAuthStore.
func (s *OAuthStore) TokenByHash(ctx context.Context, hash string) (domain.OAuthToken, error) {
	var d oauthTokenDoc
	if err := s.tokens.FindOne(ctx, bson.D{{Key: "_id", Value: hash}}).Decode(&d); err != nil {
		return domain.OAuthToken{}, fmt.Errorf("token: %w", interpretError(err, nil))
	}
	return domain.OAuthToken{Hash: d.Hash, ClientID: d.ClientID, UserID: d.UserID, AvatarID: d.AvatarID, Scopes: scopesOf(d.Scopes),
		GrantHash: d.GrantHash, CreatedAt: d.CreatedAt.UTC()}, nil
}

// RevokeToken implements ports.OAuthStore.
func (s *OAuthStore) RevokeToken(ctx context.Context, hash string) error {
	res, err := s.tokens.DeleteOne(ctx, bson.D{{Key: "_id", Value: hash}})
	if err != nil {
		return fmt.Errorf("token: %w", interpretError(err, nil))
	}
	if res.DeletedCount == 0 {
		return fmt.Errorf("token: %w", domain.ErrNotFound)
	}
	return nil
}

// RevokeGrantTokens implements ports.OAuthStore along oauth_tokens_grant.
func (s *OAuthStore) RevokeGrantTokens(ctx context.Context, grantHash string) (int, error) {
	if grantHash == "" {
		return 0, nil
	}
	res, err := s.tokens.DeleteMany(ctx, bson.D{{Key: "grantHash", Value: grantHash}})
	if err != nil {
		return 0, fmt.Errorf("tokens of a grant: %w", interpretError(err, nil))
	}
	return int(res.DeletedCount), nil
}

const (
	collAccountIDs  = "account_ids"
	idxAccountIDsID = "account_ids_id"
)

var _ ports.AccountIDStore = (*AccountIDStore)(nil)

// AccountIDStore keeps remote actors' account ids in account_ids (_id
// the actor URI; account_ids_id keeps each id one actor's).
type AccountIDStore struct{ ids *mongodrv.Collection }

// NewAccountIDStore returns the store of db.
func NewAccountIDStore(db *mongodrv.Database) *AccountIDStore {
	return &AccountIDStore{ids: collection(db, collAccountIDs)}
}

type accountIDDoc struct {
	ActorURI string `bson:"_id"`
	ID       string `bson:"id"`
}

// AccountID implements ports.AccountIDStore: a read, and on a miss an
// insert; losing a race on the actor (_id) reads the winner's id.
func (s *AccountIDStore) AccountID(ctx context.Context, actorURI, newID string) (string, error) {
	var d accountIDDoc
	err := s.ids.FindOne(ctx, bson.D{{Key: "_id", Value: actorURI}}).Decode(&d)
	if err == nil {
		return d.ID, nil
	}
	if err != mongodrv.ErrNoDocuments {
		return "", fmt.Errorf("account id of %s: %w", actorURI, interpretError(err, nil))
	}
	if err := insertOne(ctx, s.ids, accountIDDoc{ActorURI: actorURI, ID: newID}); err != nil {
		if !mongodrv.IsDuplicateKeyError(err) {
			return "", fmt.Errorf("account id of %s: %w", actorURI, interpretError(err, nil))
		}
		if ferr := s.ids.FindOne(ctx, bson.D{{Key: "_id", Value: actorURI}}).Decode(&d); ferr != nil {
			// The duplicate was the id, held by another actor.
			return "", fmt.Errorf("account id of %s: %w", actorURI, interpretError(err, nil))
		}
		return d.ID, nil
	}
	return newID, nil
}

// AccountURI implements ports.AccountIDStore along account_ids_id.
func (s *AccountIDStore) AccountURI(ctx context.Context, id string) (string, error) {
	var d accountIDDoc
	if err := s.ids.FindOne(ctx, bson.D{{Key: "id", Value: id}}).Decode(&d); err != nil {
		return "", fmt.Errorf("account id %s: %w", id, interpretError(err, nil))
	}
	return d.ActorURI, nil
}
