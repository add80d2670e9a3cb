package postgres_test

import (
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

// Three pools (three processes) lease batches with a cap of 2, settle with
// every kind of outcome, let some leases expire under a reaper running
// alongside, and settle some of those late (lost): while they run and after,
// host_slots equals the leased rows host by host, and no host ever has more
// than 2 leased. One statement reads both tables in one snapshot, and every
// statement that moves a job in or out of leased moves its host's count in
// the same transaction, so the two agree at every instant, not only at the
// end.
func TestHostSlotsMatchLeasedRowsUnderChaos(t *testing.T) {
	t.Parallel()
	s, first := migratedSchema(t)
	contract.LeaseChaos(t, contract.Chaos{
		Stores: []ports.JobStore{postgres.NewJobStore(first), postgres.NewJobStore(s.pool(t)), postgres.NewJobStore(s.pool(t))},
		Read: func() (r contract.SlotReading, err error) {
			err = first.QueryRow(testCtx(t), contract.SlotReadingSQL).Scan(&r.Drift, &r.Worst, &r.Held)
			return r, err
		},
		Hosts: 12, Jobs: 1200, Workers: 12,
		Lease: 30 * time.Millisecond, Slow: 60 * time.Millisecond,
	})
}
