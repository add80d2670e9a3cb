package memory_test

import (
	"testing"

	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

func TestOAuthStore(t *testing.T) {
	t.Parallel()
	contract.OAuthStore(t, func(t *testing.T) ports.OAuthStore { return memory.NewOAuthStore() })
}

func TestAccountIDStore(t *testing.T) {
	t.Parallel()
	contract.AccountIDStore(t, func(t *testing.T) ports.AccountIDStore { return memory.NewAccountIDStore() })
}
