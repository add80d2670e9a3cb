package mongo

import (
	"errors"
	"fmt"
	"testing"

	mongodrv "go.mongodb.org/mongo-driver/mongo"
)

func TestChangeStreamsUnsupported(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"FerretDB v2", mongodrv.CommandError{Code: 115, Name: "CommandNotSupported", Message: "Stage $changeStream is not supported yet in native pipeline"}, true},
		{"standalone mongod", mongodrv.CommandError{Code: 40573, Message: "The $changeStream stage is only supported on replica sets"}, true},
		{"old server", fmt.Errorf("watch: %w", mongodrv.CommandError{Code: 40324, Message: "Unrecognized pipeline stage name: '$changeStream'"}), true},
		{"not implemented", mongodrv.CommandError{Code: 238}, true},
		{"primary stepped down", mongodrv.CommandError{Code: 189, Name: "PrimarySteppedDown"}, false},
		{"network", errors.New("connection reset by peer"), false},
		{"nil", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := changeStreamsUnsupported(c.err); got != c.want {
				t.Fatalf("changeStreamsUnsupported(%v) = %v, want %v", c.err, got, c.want)
			}
		})
	}
}
