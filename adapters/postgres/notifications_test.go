package postgres_test

import (
	"testing"

	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

func TestNotificationStore(t *testing.T) {
	t.Parallel()
	contract.NotificationStore(t, func(t *testing.T) ports.NotificationStore { return postgres.NewNotificationStore(migrated(t)) })
}
