package mongo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/heraldfed/herald/domain"
)

// Legacy delivery states that migration 004 reads and writes.
const (
	deliveryPending   = "pending"
	deliveryAbandoned = "abandoned" // moved into jobs (or already queued there)
	deliveryUnmovable = "unmovable" // cannot become a job; moveError says why
)

// moveBatch is how many legacy rows one round of the move handles.
const moveBatch = 500

type legacyDelivery struct {
	ID       any           `bson:"_id"`
	Activity bson.RawValue `bson:"activity"`
	Inbox    string        `bson:"inbox"`
	Actor    bson.RawValue `bson:"actor"`
	KeyID    string        `bson:"keyId"` // optional; else the activity's actor + "#main-key"
	Attempts int           `bson:"attempts"`
	Created  time.Time     `bson:"created"`
}

type moveCounts struct{ moved, duplicates, unmovable int }

// moveDeliveries is migration 004's Go part: every legacy delivery in state
// pending becomes a queued job (dedupe key domain.DedupeKey(activity id,
// inbox), attempts kept, created kept, due now) and is then marked
// abandoned, so the old worker, if it is ever started again, cannot send
// it too. It is idempotent and safe to run from two processes at once: a
// job whose dedupe key is queued already is the unique index's no-op, and
// only rows still pending are marked. A row that cannot be a job (no
// activity id, no http(s) inbox, no sender) is marked unmovable with the
// reason rather than dropped, for an operator to look at.
func moveDeliveries(ctx context.Context, db *mongodrv.Database, log *slog.Logger) (moveCounts, error) {
	deliveries := collection(db, collDeliveries)
	jobs := collection(db, collJobs)
	var total moveCounts
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		cur, err := deliveries.Find(ctx, bson.D{{Key: "state", Value: deliveryPending}},
			options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(moveBatch))
		if err != nil {
			return total, fmt.Errorf("read legacy deliveries: %w", interpretError(err, nil))
		}
		var rows []legacyDelivery
		if err := cur.All(ctx, &rows); err != nil {
			return total, fmt.Errorf("read legacy deliveries: %w", interpretError(err, nil))
		}
		if len(rows) == 0 {
			return total, nil
		}
		n, err := moveRows(ctx, deliveries, jobs, rows, log)
		total.moved += n.moved
		total.duplicates += n.duplicates
		total.unmovable += n.unmovable
		if err != nil {
			return total, err
		}
	}
}

func moveRows(ctx context.Context, deliveries, jobs *mongodrv.Collection, rows []legacyDelivery, log *slog.Logger) (moveCounts, error) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	var counts moveCounts
	var docs []any
	var docRow []int // docs[i] came from rows[docRow[i]]
	keys := make([]string, len(rows))
	marks := make([]mongodrv.WriteModel, 0, len(rows))
	for i, r := range rows {
		j, err := r.job(now)
		if err != nil {
			counts.unmovable++
			log.Warn("mongo: legacy delivery cannot become a job", slog.Any("delivery_id", r.ID), slog.String("error", err.Error()))
			marks = append(marks, mongodrv.NewUpdateOneModel().
				SetFilter(bson.D{{Key: "_id", Value: r.ID}, {Key: "state", Value: deliveryPending}}).
				SetUpdate(bson.D{{Key: "$set", Value: bson.D{{Key: "state", Value: deliveryUnmovable}, {Key: "moveError", Value: err.Error()}}}}))
			continue
		}
		d := toJobDoc(j)
		d.LegacyDeliveryID = r.ID
		docs = append(docs, d)
		docRow = append(docRow, i)
		keys[i] = j.DedupeKey
	}
	if len(docs) > 0 {
		_, err := jobs.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
		var bwe mongodrv.BulkWriteException
		switch {
		case err == nil:
		case errors.As(err, &bwe) && bwe.WriteConcernError == nil:
			for _, we := range bwe.WriteErrors {
				if we.Code != 11000 && we.Code != 11001 {
					return counts, fmt.Errorf("insert job for legacy delivery %v: %w", rows[docRow[we.Index]].ID, interpretError(err, nil))
				}
				counts.duplicates++ // queued before: by an earlier run, or by the new engine
			}
		default:
			return counts, fmt.Errorf("insert jobs for legacy deliveries: %w", interpretError(err, nil))
		}
		counts.moved = len(docs) - counts.duplicates
		for _, i := range docRow {
			marks = append(marks, mongodrv.NewUpdateOneModel().
				SetFilter(bson.D{{Key: "_id", Value: rows[i].ID}, {Key: "state", Value: deliveryPending}}).
				SetUpdate(bson.D{{Key: "$set", Value: bson.D{
					{Key: "state", Value: deliveryAbandoned},
					{Key: "movedAt", Value: now},
					{Key: "dedupeKey", Value: keys[i]},
				}}}))
		}
	}
	if _, err := deliveries.BulkWrite(ctx, marks, options.BulkWrite().SetOrdered(false)); err != nil {
		return counts, fmt.Errorf("mark legacy deliveries: %w", interpretError(err, nil))
	}
	return counts, nil
}

// job builds the queued job of a legacy row, validated by domain.NewJob.
func (r legacyDelivery) job(now time.Time) (domain.Job, error) {
	payload, activityID, actorURI, err := parseActivity(r.Activity)
	if err != nil {
		return domain.Job{}, err
	}
	keyID := r.KeyID
	if keyID == "" && actorURI != "" {
		keyID = actorURI + "#main-key" // the key id every Herald actor has (application.URLs.Key)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return domain.Job{}, err
	}
	j, err := domain.NewJob(id.String(), activityID, r.Inbox, idString(r.Actor), keyID, payload, now)
	if err != nil {
		return domain.Job{}, err
	}
	j.Attempts = max(r.Attempts, 0)
	if !r.Created.IsZero() {
		j.CreatedAt = r.Created.UTC()
	}
	return j, nil
}

// idString reads a legacy id that may be a string or an ObjectId.
func idString(v bson.RawValue) string {
	switch v.Type {
	case bson.TypeString:
		return v.StringValue()
	case bson.TypeObjectID:
		return v.ObjectID().Hex()
	}
	return ""
}

// parseActivity reads a legacy activity, stored as an embedded document or
// as JSON text: the payload to send, its id and its actor's URI.
func parseActivity(v bson.RawValue) (payload []byte, id, actor string, err error) {
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		doc := v.Document()
		payload, err = bson.MarshalExtJSON(doc, false, false)
		if err != nil {
			return nil, "", "", fmt.Errorf("activity: %w", err)
		}
		id, _ = doc.Lookup("id").StringValueOK()
		switch a := doc.Lookup("actor"); a.Type {
		case bson.TypeString:
			actor = a.StringValue()
		case bson.TypeEmbeddedDocument:
			actor, _ = a.Document().Lookup("id").StringValueOK()
		}
	case bson.TypeString, bson.TypeBinary:
		if v.Type == bson.TypeString {
			payload = []byte(v.StringValue())
		} else {
			_, payload = v.Binary()
		}
		var a struct {
			ID    string          `json:"id"`
			Actor json.RawMessage `json:"actor"`
		}
		if err := json.Unmarshal(payload, &a); err != nil {
			return nil, "", "", fmt.Errorf("activity is not JSON: %w", err)
		}
		id = a.ID
		if err := json.Unmarshal(a.Actor, &actor); err != nil {
			var obj struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(a.Actor, &obj) == nil {
				actor = obj.ID
			}
		}
	default:
		return nil, "", "", fmt.Errorf("activity is a BSON %s, want a document or JSON text", v.Type)
	}
	if id == "" {
		return nil, "", "", errors.New("activity has no id")
	}
	return payload, id, actor, nil
}

// unmoveDeliveries is migration 004's Go down step: each job it moved that
// the new engine has not started (still queued) goes back to its legacy
// row, which becomes pending again with the job's attempts, and the job is
// deleted. The row is revived first and the job deleted second, each step
// conditional, so an interrupted run can simply be run again; a job that
// turns out to be leased by then keeps its row abandoned. Unmovable rows
// become pending again. It reads the jobs collection without an index on
// legacyDeliveryId: a rollback is rare and the scan is bounded by the queue.
func unmoveDeliveries(ctx context.Context, db *mongodrv.Database) (int, error) {
	deliveries := collection(db, collDeliveries)
	jobs := collection(db, collJobs)
	returned := 0
	after := ""
	for {
		filter := bson.D{
			{Key: "legacyDeliveryId", Value: bson.D{{Key: "$exists", Value: true}}},
			{Key: "state", Value: string(domain.JobQueued)},
		}
		if after != "" {
			filter = append(filter, bson.E{Key: "_id", Value: bson.D{{Key: "$gt", Value: after}}})
		}
		cur, err := jobs.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(moveBatch))
		if err != nil {
			return returned, fmt.Errorf("read moved jobs: %w", interpretError(err, nil))
		}
		var batch []jobDoc
		if err := cur.All(ctx, &batch); err != nil {
			return returned, fmt.Errorf("read moved jobs: %w", interpretError(err, nil))
		}
		if len(batch) == 0 {
			break
		}
		for _, j := range batch {
			after = j.ID
			row := bson.D{{Key: "_id", Value: j.LegacyDeliveryID}}
			if _, err := deliveries.UpdateOne(ctx, append(row, bson.E{Key: "state", Value: deliveryAbandoned}), bson.D{
				{Key: "$set", Value: bson.D{{Key: "state", Value: deliveryPending}, {Key: "attempts", Value: j.Attempts}}},
			}); err != nil {
				return returned, fmt.Errorf("revive legacy delivery %v: %w", j.LegacyDeliveryID, interpretError(err, nil))
			}
			res, err := jobs.DeleteOne(ctx, bson.D{{Key: "_id", Value: j.ID}, {Key: "state", Value: string(domain.JobQueued)}})
			if err != nil {
				return returned, fmt.Errorf("delete moved job %s: %w", j.ID, interpretError(err, nil))
			}
			if res.DeletedCount == 0 {
				// Leased meanwhile: the new engine owns it; the row must not
				// be sent by the old worker too.
				if _, err := deliveries.UpdateOne(ctx, append(row, bson.E{Key: "state", Value: deliveryPending}),
					bson.D{{Key: "$set", Value: bson.D{{Key: "state", Value: deliveryAbandoned}}}}); err != nil {
					return returned, fmt.Errorf("re-abandon legacy delivery %v: %w", j.LegacyDeliveryID, interpretError(err, nil))
				}
				continue
			}
			returned++
		}
	}
	if _, err := deliveries.UpdateMany(ctx, bson.D{{Key: "state", Value: deliveryUnmovable}}, bson.D{
		{Key: "$set", Value: bson.D{{Key: "state", Value: deliveryPending}}},
		{Key: "$unset", Value: bson.D{{Key: "moveError", Value: ""}}},
	}); err != nil {
		return returned, fmt.Errorf("revive unmovable legacy deliveries: %w", interpretError(err, nil))
	}
	return returned, nil
}
