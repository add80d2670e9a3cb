package mongotest

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
)

// Identify names the server client talks to, from buildInfo, and lists by
// name what a run on it leaves unverified. A MongoDB-compatible server that
// is not MongoDB (FerretDB v2 on PostgreSQL with DocumentDB) runs the whole
// suite, concurrent cases included, but has no replica set, no
// multi-document transactions and no change streams: the adapter uses
// neither of the last two (TransactionWatch proves it for transactions),
// and what a replica set adds stays for a real MongoDB.
func Identify(ctx context.Context, client *mongodrv.Client) (name string, unverified []string) {
	var info struct {
		Version  string `bson:"version"`
		FerretDB *struct {
			Version string `bson:"version"`
		} `bson:"ferretdb"`
	}
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&info); err != nil {
		return fmt.Sprintf("MongoDB at MONGODB_URI (buildInfo: %v)", err), nil
	}
	if info.FerretDB == nil {
		return "MongoDB " + info.Version + " at MONGODB_URI", nil
	}
	return fmt.Sprintf("FerretDB %s (MongoDB %s wire protocol) at MONGODB_URI", info.FerretDB.Version, info.Version), []string{
		"multi-document transactions: the server has none; the stores use none (every command was watched, see above)",
		"change streams: the server has none; the Waker falls back to reading the enqueue signal every second " +
			"(TestWaker proves the fallback); its change stream path needs a replica set",
		"majority write concern on a replica set, and a primary stepping down mid-lease: the server is one node " +
			"(it accepts w:majority; the commands carry it, TestWriteConcernOnTheWire)",
	}
}
