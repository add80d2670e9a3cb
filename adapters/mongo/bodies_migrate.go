package mongo

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"
)

// bodiesVersion is the schema version of the bodies collection and the
// fan-out records (issue 15). Its up step changes no data: jobs stored
// before it keep their payload field, which fillBodies honours. Its down
// step is Go code (MigrateDown, before golang-migrate leaves version 5):
// restoreBodies.
const bodiesVersion = 5

// codeNamespaceNotFound is a drop of a collection that does not exist.
const codeNamespaceNotFound = 26

// restoreBodies is migration 005's down step: every job that refers to a
// stored body gets the body back in its payload field (the shape an older
// version reads), and bodies and fan_outs are dropped. A job whose body is
// missing keeps its bodyId and no payload (the older engine kills it as
// empty, as this one does). Interrupted, it can run again: a job with its
// payload back is not touched twice, and the bodies are dropped last.
func restoreBodies(ctx context.Context, db *mongodrv.Database) (int, error) {
	jobs := collection(db, collJobs)
	cur, err := collection(db, collBodies).Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return 0, fmt.Errorf("read bodies: %w", interpretError(err, nil))
	}
	defer cur.Close(ctx)
	restored := 0
	for cur.Next(ctx) {
		var b bodyDoc
		if err := cur.Decode(&b); err != nil {
			return restored, err
		}
		res, err := jobs.UpdateMany(ctx,
			bson.D{{Key: "bodyId", Value: b.ID}, {Key: "payload", Value: bson.D{{Key: "$exists", Value: false}}}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "payload", Value: b.Body}}}, {Key: "$unset", Value: bson.D{{Key: "bodyId", Value: ""}}}})
		if err != nil {
			return restored, fmt.Errorf("restore body %s: %w", b.ID, interpretError(err, nil))
		}
		restored += int(res.ModifiedCount)
	}
	if err := cur.Err(); err != nil {
		return restored, interpretError(err, nil)
	}
	for _, c := range []string{collFanOuts, collBodies} {
		if err := db.Collection(c).Drop(ctx); err != nil {
			var se mongodrv.ServerError
			if !errors.As(err, &se) || !se.HasErrorCode(codeNamespaceNotFound) {
				return restored, fmt.Errorf("drop %s: %w", c, interpretError(err, nil))
			}
		}
	}
	if _, err := jobs.Indexes().DropOne(ctx, idxJobsBodyID); err != nil {
		var se mongodrv.ServerError
		if !errors.As(err, &se) || !(se.HasErrorCode(27) || se.HasErrorCode(codeNamespaceNotFound)) { // IndexNotFound
			return restored, fmt.Errorf("drop index %s: %w", idxJobsBodyID, interpretError(err, nil))
		}
	}
	return restored, nil
}
