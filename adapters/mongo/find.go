package mongo

import (
	"context"
	"errors"
	"fmt"
	"sync"

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

// sideBySide runs read(0) to read(n-1) at once and joins their errors:
// for readings that each cost a round trip, so that together they take
// as long as the slowest, not the sum.
func sideBySide(n int, read func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = read(i) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
