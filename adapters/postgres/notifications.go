package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	pgx "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var _ ports.NotificationStore = (*NotificationStore)(nil)

// NotificationStore keeps notifications in notifications (migration
// 029): id the primary key (byte order), (recipient, dedupe_key)
// unique, read along notifications_recipient_idx.
type NotificationStore struct{ pool *pgxpool.Pool }

// NewNotificationStore returns the store on pool.
func NewNotificationStore(pool *pgxpool.Pool) *NotificationStore {
	return &NotificationStore{pool: pool}
}

const notificationColumns = `id, recipient, kind, actor_uri, post_uri, dedupe_key, created_at`

func scanNotification(row pgx.Row) (domain.Notification, error) {
	var n domain.Notification
	var kind string
	if err := row.Scan(&n.ID, &n.Recipient, &kind, &n.ActorURI, &n.PostURI, &n.Key, &n.CreatedAt); err != nil {
		return domain.Notification{}, err
	}
	n.Kind, n.CreatedAt = domain.NotificationKind(kind), n.CreatedAt.UTC()
	return n, nil
}

// AddNotification implements ports.NotificationStore: the unique
// (recipient, dedupe_key) decides, so of concurrent adds of one key
// exactly one inserts; a taken id is a primary key violation.
func (s *NotificationStore) AddNotification(ctx context.Context, n domain.Notification) (bool, error) {
	tag, err := s.pool.Exec(ctx, `
INSERT INTO notifications (`+notificationColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (recipient, dedupe_key) DO NOTHING`,
		n.ID, n.Recipient, string(n.Kind), n.ActorURI, n.PostURI, n.Key, n.CreatedAt)
	if err != nil {
		return false, fmt.Errorf("notification %s: %w", n.ID, interpretError(err))
	}
	return tag.RowsAffected() == 1, nil
}

func kindStrings(ks []domain.NotificationKind) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}

// Notifications implements ports.NotificationStore in one query along
// notifications_recipient_idx; the kinds and the actor filter the
// recipient's range.
func (s *NotificationStore) Notifications(ctx context.Context, recipient string, f domain.NotificationFilter) ([]domain.Notification, error) {
	q := `SELECT ` + notificationColumns + ` FROM notifications WHERE recipient = $1`
	args := []any{recipient}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if len(f.Kinds) > 0 {
		q += ` AND kind = ANY(` + arg(kindStrings(f.Kinds)) + `)`
	}
	if len(f.Exclude) > 0 {
		q += ` AND NOT kind = ANY(` + arg(kindStrings(f.Exclude)) + `)`
	}
	if f.ActorURI != "" {
		q += ` AND actor_uri = ` + arg(f.ActorURI)
	}
	q, args = pageSQL(q, args, "id", f.MaxID, f.Above(), f.MinID, f.Limit)
	out, err := query(ctx, s.pool, scanNotification, q, args...)
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
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if maxID != "" {
		q += ` AND ` + col + ` < ` + arg(maxID)
	}
	if above != "" {
		q += ` AND ` + col + ` > ` + arg(above)
	}
	order := "DESC"
	if minID != "" {
		order = "ASC"
	}
	return q + ` ORDER BY ` + col + ` ` + order + ` LIMIT ` + arg(limit), args
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
	n, err := scanNotification(s.pool.QueryRow(ctx, `SELECT `+notificationColumns+` FROM notifications WHERE id = $1 AND recipient = $2`, id, recipient))
	if err != nil {
		return domain.Notification{}, fmt.Errorf("notification %s: %w", id, interpretError(err))
	}
	return n, nil
}

// DismissNotification implements ports.NotificationStore.
func (s *NotificationStore) DismissNotification(ctx context.Context, recipient, id string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM notifications WHERE id = $1 AND recipient = $2`, id, recipient)
	if err != nil {
		return fmt.Errorf("notification %s: %w", id, interpretError(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("notification %s: %w", id, domain.ErrNotFound)
	}
	return nil
}

// ClearNotifications implements ports.NotificationStore along
// notifications_recipient_idx.
func (s *NotificationStore) ClearNotifications(ctx context.Context, recipient string) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM notifications WHERE recipient = $1`, recipient)
	if err != nil {
		return 0, fmt.Errorf("notifications of %s: %w", recipient, interpretError(err))
	}
	return int(tag.RowsAffected()), nil
}

// DeleteActorNotifications implements ports.NotificationStore along
// notifications_actor_idx.
func (s *NotificationStore) DeleteActorNotifications(ctx context.Context, actorURI string) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM notifications WHERE actor_uri = $1`, actorURI)
	if err != nil {
		return 0, fmt.Errorf("notifications by %s: %w", actorURI, interpretError(err))
	}
	return int(tag.RowsAffected()), nil
}
