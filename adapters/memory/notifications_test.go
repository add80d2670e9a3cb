package memory_test

import (
	"testing"

	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

func TestNotificationStore(t *testing.T) {
	t.Parallel()
	contract.NotificationStore(t, func(t *testing.T) ports.NotificationStore { return memory.NewNotificationStore() })
}
