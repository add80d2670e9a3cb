package memory_test

import (
	"testing"

	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

func TestJobStore(t *testing.T) {
	contract.JobStore(t, func(t *testing.T) contract.Jobs { return memory.NewJobStore() })
	contract.JobStoreReadyHosts(t, func(t *testing.T) contract.Jobs { return memory.NewJobStore() })
}

func TestNameRegistry(t *testing.T) {
	contract.NameRegistry(t, func(t *testing.T) ports.NameRegistry { return memory.NewNameRegistry() })
}

func TestInstanceStore(t *testing.T) {
	contract.InstanceStore(t, func(t *testing.T) ports.InstanceStore { return memory.NewInstanceStore() })
}

func TestFollowerStore(t *testing.T) {
	contract.FollowerStore(t, func(t *testing.T) ports.FollowerStore { return memory.NewFollowerStore() })
}

func TestFanOutStore(t *testing.T) {
	contract.FanOutStore(t, func(t *testing.T) ports.FanOutStore { return memory.NewFanOutStore() })
}

func TestUserStore(t *testing.T) {
	contract.UserStore(t, func(t *testing.T) ports.UserStore { return memory.NewAccountStore() })
}

func TestTokenStore(t *testing.T) {
	contract.TokenStore(t, func(t *testing.T) ports.TokenStore { return memory.NewAccountStore() })
}

func TestActorStore(t *testing.T) {
	contract.ActorStore(t, func(t *testing.T) ports.ActorStore { return memory.NewAccountStore() })
	contract.ActorSettings(t, func(t *testing.T) ports.ActorStore { return memory.NewAccountStore() })
}

func TestForeignActorStore(t *testing.T) {
	contract.ForeignActorStore(t, func(t *testing.T) ports.ForeignActorStore { return memory.NewContentStore() })
}

func TestPostStore(t *testing.T) {
	contract.PostStore(t, func(t *testing.T) ports.PostStore { return memory.NewContentStore() })
}

func TestPostExtras(t *testing.T) {
	contract.PostExtras(t, func(t *testing.T) ports.PostStore { return memory.NewContentStore() })
}

func TestPollStore(t *testing.T) {
	contract.PollStore(t, func(t *testing.T) contract.PostsAndPolls { return memory.NewContentStore() })
}

func TestTombstoneStore(t *testing.T) {
	contract.TombstoneStore(t, func(t *testing.T) ports.TombstoneStore { return memory.NewContentStore() })
}

func TestModerationStore(t *testing.T) {
	contract.ModerationStore(t, func(t *testing.T) ports.ModerationStore { return memory.NewModerationStore() })
}

func TestReportStore(t *testing.T) {
	contract.ReportStore(t, func(t *testing.T) ports.ReportStore { return memory.NewReportStore() })
}

func TestBlockStore(t *testing.T) {
	contract.BlockStore(t, func(t *testing.T) ports.BlockStore { return memory.NewBlockStore() })
}
