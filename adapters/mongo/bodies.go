package mongo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// collBodies keeps each activity body once, under its content address
// (domain.BodyOf) as _id; jobs name it in bodyId (issue 15).
const collBodies = "bodies"

// idxJobsBodyID answers Purge's "does any job still refer to this body?".
const idxJobsBodyID = "jobs_body_id"

// bodyDoc is one stored body. gen counts the enqueues that wrote jobs
// referring to it, and touchedAt is the newest such job's CreatedAt: a
// purge deletes a body only if no job refers to it and neither has moved
// since it looked (see sweepBodies), with no transaction.
type bodyDoc struct {
	ID        string    `bson:"_id"`
	Body      []byte    `bson:"body"`
	Gen       int64     `bson:"gen"`
	TouchedAt time.Time `bson:"touchedAt"`
}

func (s *JobStore) bodiesColl() *mongodrv.Collection {
	return collection(s.jobs.Database(), collBodies)
}

// putBodies stores the batch's bodies that are absent (an unordered
// InsertMany: a duplicate key is a body stored already) and, for those
// stored already, moves touchedAt up to the batch's jobs and gen on (one
// UpdateMany). Enqueue calls it before it inserts the jobs, so they never
// refer to a body not yet stored. A sweep deletes a body only while its
// touchedAt is before the purge cutoff: a sweep that looked before this
// and deletes after finds touchedAt moved (the jobs of an enqueue are
// created after the cutoff, days ago); one that deleted before this had
// its body stored again here.
func (s *JobStore) putBodies(ctx context.Context, bodies []ports.Body, touched time.Time) error {
	if len(bodies) == 0 {
		return nil
	}
	docs := make([]any, len(bodies))
	for i, b := range bodies {
		docs[i] = bodyDoc{ID: b.ID, Body: b.Data, Gen: 1, TouchedAt: touched.UTC()}
	}
	_, err := s.bodiesColl().InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	var existing []string
	var bwe mongodrv.BulkWriteException
	if err != nil && errors.As(err, &bwe) && bwe.WriteConcernError == nil {
		err = nil
		for _, we := range bwe.WriteErrors {
			if we.Code != 11000 && we.Code != 11001 {
				err = bwe
				break
			}
			existing = append(existing, bodies[we.Index].ID)
		}
	}
	if err != nil {
		return fmt.Errorf("store bodies: %w", interpretError(err, nil))
	}
	if len(existing) == 0 {
		return nil
	}
	_, err = s.bodiesColl().UpdateMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: existing}}}}, bson.D{
		{Key: "$inc", Value: bson.D{{Key: "gen", Value: int64(1)}}},
		{Key: "$max", Value: bson.D{{Key: "touchedAt", Value: touched.UTC()}}},
	})
	if err != nil {
		return fmt.Errorf("store bodies: %w", interpretError(err, nil))
	}
	return nil
}

// fillBodies sets the jobs' payloads from their bodies, read once each. A
// job stored before migration 007 still carries its payload and is left
// as it is; a body that is missing leaves the payload empty.
func (s *JobStore) fillBodies(ctx context.Context, jobs []domain.Job) error {
	var need []domain.Job
	for _, j := range jobs {
		if len(j.Payload) == 0 {
			need = append(need, j)
		}
	}
	ids := ports.BodyIDs(need)
	if len(ids) == 0 {
		return nil
	}
	docs, err := findAll(ctx, s.bodiesColl(), bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}, "read bodies",
		func(d bodyDoc) bodyDoc { return d })
	if err != nil {
		return err
	}
	bodies := make(map[string][]byte, len(docs))
	for _, d := range docs {
		bodies[d.ID] = d.Body
	}
	for i := range jobs {
		if len(jobs[i].Payload) == 0 {
			if b, ok := bodies[jobs[i].BodyID]; ok {
				jobs[i].Payload = b
			}
		}
	}
	return nil
}

// sweepBodies deletes the bodies touched before cutoff that no job refers
// to any more: the jobs Purge deleted, and those the TTL index expired. For
// each it reads gen, asks jobs_body_id whether a job is left, and deletes
// only if gen is unchanged and touchedAt still before the cutoff: an
// enqueue adding jobs meanwhile moved both (putBodies), or stores the body
// again if it was already gone.
func (s *JobStore) sweepBodies(ctx context.Context, cutoff time.Time) error {
	docs, err := findAll(ctx, s.bodiesColl(), bson.D{{Key: "touchedAt", Value: bson.D{{Key: "$lt", Value: cutoff.UTC()}}}},
		"sweep bodies", func(d bodyDoc) bodyDoc { return d },
		options.Find().SetProjection(bson.D{{Key: "gen", Value: 1}}))
	if err != nil {
		return err
	}
	for _, d := range docs {
		err := s.jobs.FindOne(ctx, bson.D{{Key: "bodyId", Value: d.ID}},
			options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}}).SetHint(idxJobsBodyID)).Err()
		if err == nil {
			continue // still referred to
		}
		if !errors.Is(err, mongodrv.ErrNoDocuments) {
			return fmt.Errorf("sweep bodies: %w", interpretError(err, nil))
		}
		if _, err := s.bodiesColl().DeleteOne(ctx, bson.D{{Key: "_id", Value: d.ID}, {Key: "gen", Value: d.Gen},
			{Key: "touchedAt", Value: bson.D{{Key: "$lt", Value: cutoff.UTC()}}}}); err != nil {
			return fmt.Errorf("sweep bodies: %w", interpretError(err, nil))
		}
	}
	return nil
}

// bodiesOf keeps, of a batch's bodies, those the jobs to insert refer to
// (a re-enqueued batch writes no body), and the newest CreatedAt of those
// jobs, the bodies' touchedAt.
func bodiesOf(jobs []domain.Job, bodies []ports.Body) ([]ports.Body, time.Time) {
	var touched time.Time
	want := make(map[string]bool)
	for _, j := range jobs {
		want[j.BodyID] = true
		if j.CreatedAt.After(touched) {
			touched = j.CreatedAt
		}
	}
	var out []ports.Body
	for _, b := range bodies {
		if want[b.ID] {
			out = append(out, b)
		}
	}
	return out, touched
}
