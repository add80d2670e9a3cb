package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var _ ports.NotificationStore = (*NotificationStore)(nil)

// NotificationStore keeps notifications in notifications (migration
// 020): id the primary key, (recipient, dedupe_key) unique, read along
// notifications_recipient_idx.
type NotificationStore struct{ db *DB }

// NewNotificationStore returns the store on db.
func NewNotificationStore(db *DB) *NotificationStore { return &NotificationStore{db: db} }

const notificationColumns = `id, recipient, kind, actor_uri, post_uri, dedupe_key, created_at`

func scanNotification(row scanner) (domain.Notification, error) {
	var n domain.Notification
	var kind string
	var created sql.NullInt64
	if err := row.Scan(&n.ID, &n.Recipient, &kind, &n.ActorURI, &n.PostURI, &n.Key, &created); err != nil {
		return domain.Notification{}, err
	}
	n.Kind, n.CreatedAt = domain.NotificationKind(kind), fromNanos(created)
	return n, nil
}

// AddNotification implements ports.NotificationStore: the unique
// (recipient, dedupe_key) decides, so of concurrent adds of one key
// exactly one inserts; a taken id is a primary key violation.
func (s *NotificationStore) AddNotification(ctx context.Context, n domain.Notification) (bool, error) {
	res, err := s.db.w.ExecContext(ctx, `
INSERT INTO notifications (`+notificationColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (recipient, dedupe_key) DO NOTHING`,
		n.ID, n.Recipient, string(n.Kind), n.ActorURI, n.PostURI, n.Key, nanos(n.CreatedAt))
	if err != nil {
		return false, fmt.Errorf("notification %s: %w", n.ID, interpretError(err))
	}
	return affected(res) == 1, nil
}

// Notifications implements ports.NotificationStore in one indexed
// query; the kinds and the actor filter the recipient's range.
func (s *NotificationStore) Notifications(ctx context.Context, recipient string, f domain.NotificationFilter) ([]domain.Notification, error) {
	q := `SELECT ` + notificationColumns + ` FROM notifications WHERE recipient = ?`
	args := []any{recipient}
	for _, set := range []struct {
		op    string
		kinds []domain.NotificationKind
	}{{"IN", f.Kinds}, {"NOT IN", f.Exclude}} {
		if len(set.kinds) == 0 {
			continue
		}
		q += ` AND kind ` + set.op + ` (` + placeholders(len(set.kinds)) + `)`
		for _, k := range set.kinds {
			args = append(args, string(k))
		}
	}
	if f.ActorURI != "" {
		q += ` AND actor_uri = ?`
		args = append(args, f.ActorURI)
	}
	q, args = pageSQL(q, args, "id", f.MaxID, f.Above(), f.MinID, f.Limit)
	out, err := query(ctx, s.db, scanNotification, q, args...)
	if err != nil {
		return nil, fmt.Errorf("notifications of %s: %w", recipient, interpretError(err))
	}
	return pageRows(out, f.MinID), nil
}

// pageSQL ends q, a listing along the id column col whose parameters so
// far are args, with Mastodon's paging: ids below maxID and above above,
// newest first; given minID, the page just above it, read upward (which
// pageRows turns back).
func pageSQL(q string, args []any, col, maxID, above, minID string, limit int) (string, []any) {
	if maxID != "" {
		q += ` AND ` + col + ` < ?`
		args = append(args, maxID)
	}
	if above != "" {
		q += ` AND ` + col + ` > ?`
		args = append(args, above)
	}
	order := "DESC"
	if minID != "" {
		order = "ASC"
	}
	return q + ` ORDER BY ` + col + ` ` + order + ` LIMIT ?`, append(args, limit)
}

// pageRows puts the rows of a page pageSQL read upward (given minID)
// newest first, as every page is answered.
func pageRows[T any](rows []T, minID string) []T {
	if minID != "" {
		slices.Reverse(rows)
	}
	return rows
}

// Notification implements ports.NotificationStore.
func (s *NotificationStore) Notification(ctx context.Context, recipient, id string) (domain.Notification, error) {
	n, err := scanNotification(s.db.r.QueryRowContext(ctx, `SELECT `+notificationColumns+` FROM notifications WHERE id = ? AND recipient = ?`, id, recipient))
	if err != nil {
		return domain.Notification{}, fmt.Errorf("notification %s: %w", id, interpretError(err))
	}
	return n, nil
}

// DismissNotification implements ports.NotificationStore.
func (s *NotificationStore) DismissNotification(ctx context.Context, recipient, id string) error {
	res, err := s.db.w.ExecContext(ctx, `DELETE FROM notifications WHERE id = ? AND recipient = ?`, id, recipient)
	if err != nil {
		return fmt.Errorf("notification %s: %w", id, interpretError(err))
	}
	if affected(res) == 0 {
		return fmt.Errorf("notification %s: %w", id, domain.ErrNotFound)
	}
	return nil
}

// ClearNotifications implements ports.NotificationStore along
// notifications_recipient_idx.
func (s *NotificationStore) ClearNotifications(ctx context.Context, recipient string) (int, error) {
	res, err := s.db.w.ExecContext(ctx, `DELETE FROM notifications WHERE recipient = ?`, recipient)
	if err != nil {
		return 0, fmt.Errorf("notifications of %s: %w", recipient, interpretError(err))
	}
	return affected(res), nil
}

// DeleteActorNotifications implements ports.NotificationStore along
// notifications_actor_idx.
func (s *NotificationStore) DeleteActorNotifications(ctx context.Context, actorURI string) (int, error) {
	res, err := s.db.w.ExecContext(ctx, `DELETE FROM notifications WHERE actor_uri = ?`, actorURI)
	if err != nil {
		return 0, fmt.Errorf("notifications by %s: %w", actorURI, interpretError(err))
	}
	return affected(res), nil
}
