package mongotest

import (
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"

	"github.com/heraldfed/herald/adapters/mongo"
	"github.com/heraldfed/herald/domain"
)

// Stores runs what the contract suites cannot say about the Mongo stores:
// documents as other writers (an operator, an older tool) leave them.
func Stores(t *testing.T, client *mongodrv.Client, opts ...Option) {
	o := buildOptions(opts)
	runSuite(t, o, []suiteCase{
		{"InstanceWithoutVersionIsUpdated", func(t *testing.T) {
			db := NewDB(t, client)
			insert(t, db, "remote_instances", bson.D{{Key: "_id", Value: "old.example"}, {Key: "host", Value: "old.example"},
				{Key: "consecutiveFailures", Value: 3}})
			s := mongo.NewInstanceStore(db)
			r, err := s.Update(Ctx(t), "OLD.example", func(r *domain.RemoteInstance) { r.RecordFailure(time.Now(), "x") })
			if err != nil || r.ConsecutiveFailures != 4 {
				t.Fatalf("update of a document without version: %+v %v", r, err)
			}
			if r, _ := s.Get(Ctx(t), "old.example"); r.ConsecutiveFailures != 4 {
				t.Fatalf("stored %+v", r)
			}
		}},
		{"SystemNameIsReleasedWithEmptyOwner", func(t *testing.T) {
			db := NewDB(t, client)
			names := mongo.NewNameRegistry(db)
			// as migration 001 seeds them
			insert(t, db, "reserved_names", bson.D{{Key: "_id", Value: "admin"}, {Key: "name", Value: "admin"}, {Key: "kind", Value: "system"},
				{Key: "ownerId", Value: ""}, {Key: "seededBy", Value: "001"}})
			if err := names.Release(Ctx(t), "admin", "someone"); !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("release by an owner: %v", err)
			}
			if err := names.Release(Ctx(t), "admin", ""); err != nil {
				t.Fatalf("release a seeded system name: %v", err)
			}
		}},
	})
}
