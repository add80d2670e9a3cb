package mongo

import (
	"context"
	"errors"

	mongodrv "go.mongodb.org/mongo-driver/mongo"
)

// insertOne is coll.InsertOne, sent again (up to conflictRetries times)
// while it fails only because the server undid it in a conflict with a
// concurrent writer (concurrentConflict: MongoDB's WriteConflict,
// DocumentDB's deadlock_detected or serialization_failure). Sent again, it
// meets the other writer's document as a duplicate key, as it would have
// on MongoDB, and the caller's duplicate handling applies. Measured on
// FerretDB v2: the follower contract's 32 concurrent adds of one pair met
// "deadlock detected" in one CI run of five.
func insertOne(ctx context.Context, coll *mongodrv.Collection, doc any) error {
	for attempt := 1; ; attempt++ {
		_, err := coll.InsertOne(ctx, doc)
		if err == nil || !onlyConflicts(err) || attempt == conflictRetries || ctx.Err() != nil {
			return err
		}
	}
}

// onlyConflicts reports whether err is a single-document write whose
// every write error is a concurrentConflict.
func onlyConflicts(err error) bool {
	var we mongodrv.WriteException
	if !errors.As(err, &we) || we.WriteConcernError != nil || len(we.WriteErrors) == 0 {
		return false
	}
	for _, e := range we.WriteErrors {
		if !concurrentConflict(e.Code) {
			return false
		}
	}
	return true
}
