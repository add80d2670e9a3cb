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

// updateMany is coll.UpdateMany, sent again (up to conflictRetries times
// more) while the server undid it in a conflict with a concurrent writer,
// as insertOne is: only for updates that may apply twice (markReady's $min
// and $inc: any change of seq fences a lease).
func updateMany(ctx context.Context, coll *mongodrv.Collection, filter, update any) (*mongodrv.UpdateResult, error) {
	for try := 0; ; try++ {
		res, err := coll.UpdateMany(ctx, filter, update)
		if err == nil || !undoneByConflict(err) || try == conflictRetries || ctx.Err() != nil {
			return res, err
		}
	}
}

// undoneByConflict reports whether err is a write the server undid in a
// concurrentConflict: every write error one (onlyConflicts), or the
// command refused with one.
func undoneByConflict(err error) bool {
	var ce mongodrv.CommandError
	return onlyConflicts(err) || errors.As(err, &ce) && concurrentConflict(int(ce.Code))
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
