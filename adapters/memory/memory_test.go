package memory_test

import (
	"testing"

	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

func TestContract(t *testing.T) {
	contract.Every(t, contract.Stores{
		Jobs:          func(*testing.T) contract.Jobs { return memory.NewJobStore() },
		Names:         func(*testing.T) ports.NameRegistry { return memory.NewNameRegistry() },
		Instances:     func(*testing.T) ports.InstanceStore { return memory.NewInstanceStore() },
		Followers:     func(*testing.T) ports.FollowerStore { return memory.NewFollowerStore() },
		FanOuts:       func(*testing.T) ports.FanOutStore { return memory.NewFanOutStore() },
		Accounts:      func(*testing.T) contract.Accounts { return memory.NewAccountStore() },
		Content:       func(*testing.T) contract.Content { return memory.NewContentStore() },
		Moderation:    func(*testing.T) ports.ModerationStore { return memory.NewModerationStore() },
		Reports:       func(*testing.T) ports.ReportStore { return memory.NewReportStore() },
		Blocks:        func(*testing.T) ports.BlockStore { return memory.NewBlockStore() },
		OAuth:         func(*testing.T) ports.OAuthStore { return memory.NewOAuthStore() },
		AccountIDs:    func(*testing.T) ports.AccountIDStore { return memory.NewAccountIDStore() },
		Notifications: func(*testing.T) ports.NotificationStore { return memory.NewNotificationStore() },
		Parallel:      true,
	})
}
