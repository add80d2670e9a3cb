package mongo

import (
	"context"
	"fmt"

	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"
)

// findAll runs one query and converts every document with conv: the list
// methods of every store, with their errors translated in one place. what
// names the query in the error.
func findAll[D, T any](ctx context.Context, coll *mongodrv.Collection, filter any, what string, conv func(D) T, opts ...*options.FindOptions) ([]T, error) {
	cur, err := coll.Find(ctx, filter, opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, interpretError(err, nil))
	}
	var docs []D
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("%s: %w", what, interpretError(err, nil))
	}
	out := make([]T, len(docs))
	for i, d := range docs {
		out[i] = conv(d)
	}
	return out, nil
}
