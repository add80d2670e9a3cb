package sqlite_test

import (
	"testing"

	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

func TestNotificationStore(t *testing.T) {
	t.Parallel()
	contract.NotificationStore(t, func(t *testing.T) ports.NotificationStore { return sqlite.NewNotificationStore(migrated(t)) })
}
