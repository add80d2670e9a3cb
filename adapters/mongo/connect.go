package mongo

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"
	"go.mongodb.org/mongo-driver/mongo/readpref"
	"go.mongodb.org/mongo-driver/mongo/writeconcern"
	"go.mongodb.org/mongo-driver/x/mongo/driver/connstring"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// Collection names. They are part of the stored schema (see the package
// documentation); migrations/mongo spells them the same way.
const (
	collRootUsers       = "root_users"
	collTokens          = "tokens"
	collAvatars         = "avatars"
	collGroups          = "groups"
	collReservedNames   = "reserved_names"
	collForeignAvatars  = "foreign_avatars"
	collPosts           = "posts"
	collDmPosts         = "dm_posts"
	collBoosts          = "boosts"
	collFollowers       = "followers"
	collRemoteInstances = "remote_instances"
	collJobs            = "jobs"
	collTombstones      = "tombstones"
	collDomainBlocks    = "domain_blocks"
	collDomainAllows    = "domain_allows"
	collReports         = "reports"
	collActorBlocks     = "actor_blocks"
	collPollVotes       = "poll_votes"
	collOpenPolls       = "open_polls"
	collDeliveries      = "deliveries" // legacy, read by migration 004 only
)

// entityCollections is every collection a store uses, in the fixed order
// Touch creates them.
var entityCollections = [...]string{
	collRootUsers, collTokens, collAvatars, collGroups, collReservedNames,
	collForeignAvatars, collPosts, collDmPosts, collFollowers,
	collRemoteInstances, collJobs, collBoosts, collFanOuts, collJobSignals,
	collTombstones, collDomainBlocks, collDomainAllows, collReports,
	collActorBlocks, collPollVotes, collOpenPolls,
	collOAuthApps, collOAuthGrants, collOAuthTokens, collAccountIDs,
	collNotifications, collConversations, collReadyHosts,
}

// collection returns a handle with the options SPEC §9 asks for, so callers
// cannot forget them: majority write concern (a lease or a reservation
// acknowledged by a primary that then steps down must not be rolled back)
// and reads from the primary (a lease decision is never taken on a lagging
// secondary's view).
func collection(db *mongodrv.Database, name string) *mongodrv.Collection {
	return db.Collection(name, options.Collection().
		SetWriteConcern(writeconcern.Majority()).
		SetReadPreference(readpref.Primary()))
}

// Connect opens a client for uri and pings the primary. An unreachable
// server is domain.ErrUnavailable; the error names the hosts, never the
// credentials of the URI. extra options are applied last (tests add a
// command monitor); they cannot lower the write concern or read preference
// of the stores, which every collection handle sets itself.
func Connect(ctx context.Context, uri string, extra ...*options.ClientOptions) (*mongodrv.Client, error) {
	hosts := "mongo"
	if cs, err := connstring.Parse(uri); err == nil {
		hosts = strings.Join(cs.Hosts, ",")
	} else {
		return nil, fmt.Errorf("%w: MONGODB_URI is not a valid connection string", domain.ErrInvalidInput)
	}
	opts := options.Client().ApplyURI(uri).
		SetReadPreference(readpref.Primary()).
		SetWriteConcern(writeconcern.Majority())
	client, err := mongodrv.Connect(ctx, append([]*options.ClientOptions{opts}, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("mongo %s: %w", hosts, interpretError(err, nil))
	}
	if err := client.Ping(ctx, readpref.Primary()); err != nil {
		_ = client.Disconnect(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("mongo %s: ping primary: %w", hosts, unavailable(err))
	}
	return client, nil
}

// unavailable wraps err as domain.ErrUnavailable unless interpretError
// already found a more precise meaning (a ping that fails for bad
// credentials is still "cannot use the store").
func unavailable(err error) error {
	ierr := interpretError(err, nil)
	if errors.Is(ierr, domain.ErrUnavailable) {
		return ierr
	}
	return fmt.Errorf("%w: %w", domain.ErrUnavailable, err)
}

var _ ports.Pinger = (*Pinger)(nil)

// Pinger reports whether the primary answers, for /readyz.
type Pinger struct{ client *mongodrv.Client }

// NewPinger returns a Pinger for client.
func NewPinger(client *mongodrv.Client) *Pinger { return &Pinger{client: client} }

// Ping implements ports.Pinger.
func (p *Pinger) Ping(ctx context.Context) error {
	if err := p.client.Ping(ctx, readpref.Primary()); err != nil {
		return fmt.Errorf("mongo ping: %w", unavailable(err))
	}
	return nil
}

// codeNamespaceExists is the server's answer to creating a collection that
// is there already.
const codeNamespaceExists = 48

// Touch creates every entity collection that is missing, one at a time in a
// fixed order, before anything concurrent runs (SPEC §4 step 1): the
// collections then exist before migrations, index builds and the first
// concurrent writes, so none of those races to create one implicitly (an
// implicit create inside a concurrent insert can fail with a write
// conflict on some versions, and fails inside a transaction).
func Touch(ctx context.Context, db *mongodrv.Database) error {
	for _, name := range entityCollections {
		err := db.RunCommand(ctx, bson.D{{Key: "create", Value: name}}).Err()
		var ce mongodrv.CommandError
		if errors.As(err, &ce) && ce.Code == codeNamespaceExists {
			continue
		}
		if err != nil {
			return fmt.Errorf("touch collection %s: %w", name, interpretError(err, nil))
		}
	}
	return nil
}
