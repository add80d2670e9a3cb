package application

import (
	"context"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// passingPosts holds the PostStore methods that neither read content nor
// read what a domain block hides: reactions, boost writes, deletes and a
// count. The two decorators every use case reads through (sanitizedPosts,
// moderatedPosts) embed it and write out the rest, so a method added to the
// port compiles in neither until someone decides here, or in each of them,
// what it reads.
type passingPosts struct {
	posts ports.PostStore
}

func (s passingPosts) DeletePost(ctx context.Context, objectURI string) error {
	return s.posts.DeletePost(ctx, objectURI)
}

func (s passingPosts) AddReaction(ctx context.Context, r domain.Reaction) (bool, error) {
	return s.posts.AddReaction(ctx, r)
}

func (s passingPosts) RemoveReaction(ctx context.Context, objectURI, actorURI string, kind domain.ReactionKind) error {
	return s.posts.RemoveReaction(ctx, objectURI, actorURI, kind)
}

func (s passingPosts) ReactedTo(ctx context.Context, actorURI string, objectURIs []string) ([]domain.Reaction, error) {
	return s.posts.ReactedTo(ctx, actorURI, objectURIs)
}

func (s passingPosts) CountReactions(ctx context.Context, objectURI string) (map[domain.ReactionKind]int, error) {
	return s.posts.CountReactions(ctx, objectURI)
}

func (s passingPosts) AddBoost(ctx context.Context, b domain.Boost) (bool, error) {
	return s.posts.AddBoost(ctx, b)
}

func (s passingPosts) RemoveBoost(ctx context.Context, actorURI, uri string) (domain.Boost, error) {
	return s.posts.RemoveBoost(ctx, actorURI, uri)
}

func (s passingPosts) CountLocalPosts(ctx context.Context) (int, error) {
	return s.posts.CountLocalPosts(ctx)
}

func (s passingPosts) DeleteActorContent(ctx context.Context, actorURI string) (int, error) {
	return s.posts.DeleteActorContent(ctx, actorURI)
}
