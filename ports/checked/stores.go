package checked

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// The stores beside the queue: each wrapper checks what its port's
// comments ask of a caller, so the memory, SQLite, PostgreSQL and Mongo
// stores do not each repeat it.

// NewModeration returns s behind the checks of the domain blocks and allows
// it stores.
func NewModeration(s ports.ModerationStore) ports.ModerationStore { return moderation{s} }

type moderation struct{ ports.ModerationStore }

func (c moderation) AddDomainBlock(ctx context.Context, b domain.DomainBlock) error {
	if err := b.Check(); err != nil {
		return err
	}
	return c.ModerationStore.AddDomainBlock(ctx, b)
}

func (c moderation) UpdateDomainBlock(ctx context.Context, b domain.DomainBlock) error {
	if err := b.Check(); err != nil {
		return err
	}
	return c.ModerationStore.UpdateDomainBlock(ctx, b)
}

func (c moderation) AddDomainAllow(ctx context.Context, a domain.DomainAllow) error {
	if err := ports.CheckDomain(a.Domain); err != nil {
		return err
	}
	return c.ModerationStore.AddDomainAllow(ctx, a)
}

// NewReports returns s behind the checks of the reports it stores and
// resolves.
func NewReports(s ports.ReportStore) ports.ReportStore { return reports{s} }

type reports struct{ ports.ReportStore }

func (c reports) AddReport(ctx context.Context, r domain.Report) (bool, error) {
	if err := ports.CheckReport(r); err != nil {
		return false, err
	}
	return c.ReportStore.AddReport(ctx, r)
}

func (c reports) ResolveReport(ctx context.Context, id string, at time.Time, note string) error {
	if at.IsZero() {
		return fmt.Errorf("%w: a resolution needs its time", domain.ErrInvalidInput)
	}
	return c.ReportStore.ResolveReport(ctx, id, at, note)
}

// NewForeign returns s behind the checks of the actors it caches and the
// domain OnDomain reads.
func NewForeign(s ports.ForeignActorStore) ports.ForeignActorStore { return foreign{s} }

type foreign struct{ ports.ForeignActorStore }

func (c foreign) Upsert(ctx context.Context, f domain.ForeignAvatar) error {
	if f.ActorURI == "" {
		return fmt.Errorf("%w: foreign actor without URI", domain.ErrInvalidInput)
	}
	return c.ForeignActorStore.Upsert(ctx, f)
}

func (c foreign) OnDomain(ctx context.Context, d, afterURI string, limit int) ([]string, error) {
	if err := ports.CheckDomain(d); err != nil {
		return nil, err
	}
	return c.ForeignActorStore.OnDomain(ctx, d, afterURI, limit)
}

// NewPosts returns s behind the bounds of the reads that take a list
// (ports.MaxAuthors, ports.MaxReactedTo).
func NewPosts(s ports.PostStore) ports.PostStore { return posts{s} }

type posts struct{ ports.PostStore }

func (c posts) PostsByAuthors(ctx context.Context, authors []string, before time.Time, limit int) ([]domain.Post, error) {
	if len(authors) > ports.MaxAuthors {
		return nil, fmt.Errorf("%w: %d authors, over %d", domain.ErrInvalidInput, len(authors), ports.MaxAuthors)
	}
	return c.PostStore.PostsByAuthors(ctx, authors, before, limit)
}

func (c posts) BoostsByActors(ctx context.Context, actors []string, before time.Time, limit int) ([]domain.Boost, error) {
	if len(actors) > ports.MaxAuthors {
		return nil, fmt.Errorf("%w: %d actors, over %d", domain.ErrInvalidInput, len(actors), ports.MaxAuthors)
	}
	return c.PostStore.BoostsByActors(ctx, actors, before, limit)
}

func (c posts) ReactedTo(ctx context.Context, actor string, uris []string) ([]domain.Reaction, error) {
	if len(uris) > ports.MaxReactedTo {
		return nil, fmt.Errorf("%w: %d posts asked about, over %d", domain.ErrInvalidInput, len(uris), ports.MaxReactedTo)
	}
	return c.PostStore.ReactedTo(ctx, actor, uris)
}

// NewTombstones returns s behind the check of the tombstones it keeps.
func NewTombstones(s ports.TombstoneStore) ports.TombstoneStore { return tombstones{s} }

type tombstones struct{ ports.TombstoneStore }

func (c tombstones) AddTombstone(ctx context.Context, t domain.Tombstone) error {
	if t.URI == "" {
		return fmt.Errorf("%w: tombstone without URI", domain.ErrInvalidInput)
	}
	return c.TombstoneStore.AddTombstone(ctx, t)
}

// NewUsers returns s behind the check of the account statuses it is given.
func NewUsers(s ports.UserStore) ports.UserStore { return users{s} }

type users struct{ ports.UserStore }

func (c users) SetUserStatus(ctx context.Context, id string, st domain.UserStatus) error {
	if !st.Valid() {
		return fmt.Errorf("%w: account status %q", domain.ErrInvalidInput, st)
	}
	return c.UserStore.SetUserStatus(ctx, id, st)
}

func (c users) UsersByStatus(ctx context.Context, st domain.UserStatus, limit int) ([]domain.RootUser, error) {
	if !st.Valid() {
		return nil, fmt.Errorf("%w: account status %q", domain.ErrInvalidInput, st)
	}
	return c.UserStore.UsersByStatus(ctx, st, limit)
}

// NewBlocks returns s behind the check of the blocks it stores.
func NewBlocks(s ports.BlockStore) ports.BlockStore { return blocks{s} }

type blocks struct{ ports.BlockStore }

func (c blocks) AddBlock(ctx context.Context, b domain.ActorBlock) (bool, error) {
	if err := b.Check(); err != nil {
		return false, err
	}
	return c.BlockStore.AddBlock(ctx, b)
}

// NewNotifications returns s behind the checks of the notifications and
// conversations it stores and the filters and pages it reads with.
func NewNotifications(s ports.NotificationStore) ports.NotificationStore { return notifications{s} }

type notifications struct{ ports.NotificationStore }

func (c notifications) AddNotification(ctx context.Context, n domain.Notification) (bool, error) {
	if err := n.Check(); err != nil {
		return false, err
	}
	return c.NotificationStore.AddNotification(ctx, n)
}

func (c notifications) Notifications(ctx context.Context, recipient string, f domain.NotificationFilter) ([]domain.Notification, error) {
	if err := f.Check(); err != nil {
		return nil, err
	}
	return c.NotificationStore.Notifications(ctx, recipient, f)
}

func (c notifications) AddToConversation(ctx context.Context, v domain.Conversation) error {
	if err := v.Check(); err != nil {
		return err
	}
	return c.NotificationStore.AddToConversation(ctx, v)
}

func (c notifications) Conversations(ctx context.Context, persona string, p domain.ConversationPage) ([]domain.Conversation, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	return c.NotificationStore.Conversations(ctx, persona, p)
}

// NewOAuth returns s behind the checks of the grants and tokens it stores.
func NewOAuth(s ports.OAuthStore) ports.OAuthStore { return oauth{s} }

type oauth struct{ ports.OAuthStore }

func (c oauth) CreateGrant(ctx context.Context, g domain.OAuthGrant) error {
	if err := g.Check(); err != nil {
		return err
	}
	return c.OAuthStore.CreateGrant(ctx, g)
}

func (c oauth) CreateToken(ctx context.Context, t domain.OAuthToken) error {
	if err := t.Check(); err != nil {
		return err
	}
	return c.OAuthStore.CreateToken(ctx, t)
}

// NewAccountIDs returns s behind the check of what it is asked for.
func NewAccountIDs(s ports.AccountIDStore) ports.AccountIDStore { return accountIDs{s} }

type accountIDs struct{ ports.AccountIDStore }

func (c accountIDs) AccountID(ctx context.Context, actorURI, newID string) (string, error) {
	if actorURI == "" || newID == "" {
		return "", fmt.Errorf("%w: an account id needs an actor and an id", domain.ErrInvalidInput)
	}
	return c.AccountIDStore.AccountID(ctx, actorURI, newID)
}
