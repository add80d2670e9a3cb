package mongo

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

const (
	collNotifications           = "notifications"
	idxNotificationsRecipientID = "notifications_recipient_id"
	idxNotificationsKey         = "notifications_recipient_key"
	idxNotificationsActor       = "notifications_actor"
)

var _ ports.NotificationStore = (*NotificationStore)(nil)

// NotificationStore keeps notifications in notifications (migration
// 015): _id the notification id, notifications_recipient_key unique by
// (recipient, dedupeKey), read along notifications_recipient_id.
type NotificationStore struct{ notes, convs *mongodrv.Collection }

// NewNotificationStore returns the store of db.
func NewNotificationStore(db *mongodrv.Database) *NotificationStore {
	return &NotificationStore{notes: collection(db, collNotifications), convs: collection(db, collConversations)}
}

type notificationDoc struct {
	ID        string    `bson:"_id"`
	Recipient string    `bson:"recipient"`
	Kind      string    `bson:"kind"`
	Actor     string    `bson:"actorUri"`
	Post      string    `bson:"postUri,omitempty"`
	Key       string    `bson:"dedupeKey"`
	CreatedAt time.Time `bson:"createdAt"`
}

func (d notificationDoc) notification() domain.Notification {
	return domain.Notification{ID: d.ID, Recipient: d.Recipient, Kind: domain.NotificationKind(d.Kind), ActorURI: d.Actor,
		PostURI: d.Post, Key: d.Key, CreatedAt: d.CreatedAt.UTC()}
}

// AddNotification implements ports.NotificationStore: an insert; a
// duplicate is the recipient's key when a notification holds it (then
// created is false), else the id.
func (s *NotificationStore) AddNotification(ctx context.Context, n domain.Notification) (bool, error) {
	err := insertOne(ctx, s.notes, notificationDoc{ID: n.ID, Recipient: n.Recipient, Kind: string(n.Kind), Actor: n.ActorURI,
		Post: n.PostURI, Key: n.Key, CreatedAt: utc(n.CreatedAt)})
	if err == nil {
		return true, nil
	}
	if !mongodrv.IsDuplicateKeyError(err) && !ferretUniqueViolation(err) {
		return false, fmt.Errorf("notification %s: %w", n.ID, interpretError(err, nil))
	}
	// FerretDB's duplicate names no index: which one it was is read.
	cnt, cerr := s.notes.CountDocuments(ctx, bson.D{{Key: "recipient", Value: n.Recipient}, {Key: "dedupeKey", Value: n.Key}})
	if cerr != nil {
		return false, fmt.Errorf("notification %s: %w", n.ID, interpretError(cerr, nil))
	}
	if cnt > 0 {
		return false, nil
	}
	return false, fmt.Errorf("notification %s: %w", n.ID, interpretError(err, nil))
}

func kindStrings(ks []domain.NotificationKind) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}

// Notifications implements ports.NotificationStore: one find along
// notifications_recipient_id.
func (s *NotificationStore) Notifications(ctx context.Context, recipient string, f domain.NotificationFilter) ([]domain.Notification, error) {
	filter := idRange(bson.D{{Key: "recipient", Value: recipient}}, "_id", f.MaxID, f.Above())
	kinds := bson.D{}
	if len(f.Kinds) > 0 {
		kinds = append(kinds, bson.E{Key: "$in", Value: kindStrings(f.Kinds)})
	}
	if len(f.Exclude) > 0 {
		kinds = append(kinds, bson.E{Key: "$nin", Value: kindStrings(f.Exclude)})
	}
	if len(kinds) > 0 {
		filter = append(filter, bson.E{Key: "kind", Value: kinds})
	}
	if f.ActorURI != "" {
		filter = append(filter, bson.E{Key: "actorUri", Value: f.ActorURI})
	}
	order := -1
	if f.MinID != "" {
		order = 1 // the page just above MinID, reversed below
	}
	opts := options.Find().SetSort(bson.D{{Key: "_id", Value: order}}).SetLimit(int64(f.Limit))
	out, err := findAll(ctx, s.notes, filter, "notifications of "+recipient, notificationDoc.notification, opts)
	if err != nil {
		return nil, err
	}
	if f.MinID != "" {
		slices.Reverse(out)
	}
	return out, nil
}

// Notification implements ports.NotificationStore.
func (s *NotificationStore) Notification(ctx context.Context, recipient, id string) (domain.Notification, error) {
	var d notificationDoc
	if err := s.notes.FindOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "recipient", Value: recipient}}).Decode(&d); err != nil {
		return domain.Notification{}, fmt.Errorf("notification %s: %w", id, interpretError(err, nil))
	}
	return d.notification(), nil
}

// DismissNotification implements ports.NotificationStore.
func (s *NotificationStore) DismissNotification(ctx context.Context, recipient, id string) error {
	res, err := s.notes.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "recipient", Value: recipient}})
	if err != nil {
		return fmt.Errorf("notification %s: %w", id, interpretError(err, nil))
	}
	if res.DeletedCount == 0 {
		return fmt.Errorf("notification %s: %w", id, domain.ErrNotFound)
	}
	return nil
}

// ClearNotifications implements ports.NotificationStore along
// notifications_recipient_id.
func (s *NotificationStore) ClearNotifications(ctx context.Context, recipient string) (int, error) {
	res, err := s.notes.DeleteMany(ctx, bson.D{{Key: "recipient", Value: recipient}})
	if err != nil {
		return 0, fmt.Errorf("notifications of %s: %w", recipient, interpretError(err, nil))
	}
	return int(res.DeletedCount), nil
}

// DeleteActorNotifications implements ports.NotificationStore along
// notifications_actor.
func (s *NotificationStore) DeleteActorNotifications(ctx context.Context, actorURI string) (int, error) {
	res, err := s.notes.DeleteMany(ctx, bson.D{{Key: "actorUri", Value: actorURI}})
	if err != nil {
		return 0, fmt.Errorf("notifications by %s: %w", actorURI, interpretError(err, nil))
	}
	return int(res.DeletedCount), nil
}

// idRange adds to filter the bounds of a page of ids on field: below maxID
// and above above, each left out when "".
func idRange(filter bson.D, field, maxID, above string) bson.D {
	r := bson.D{}
	if maxID != "" {
		r = append(r, bson.E{Key: "$lt", Value: maxID})
	}
	if above != "" {
		r = append(r, bson.E{Key: "$gt", Value: above})
	}
	if len(r) == 0 {
		return filter
	}
	return append(filter, bson.E{Key: field, Value: r})
}
