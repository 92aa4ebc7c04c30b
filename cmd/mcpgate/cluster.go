// cluster.go connects the commands to the Redis of a deployment of several
// replicas (redis: {url}, --redis). serve shares rate buckets, token events
// and session counts through it. The token commands announce what they
// change, so that every replica applies it at once.

package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpgate/mcpgate/internal/cluster"
	"github.com/mcpgate/mcpgate/internal/config"
)

// openCluster connects to the configured Redis, or returns nil without
// one.
func openCluster(ctx context.Context, cfg *config.Config, log *slog.Logger) (*cluster.Redis, error) {
	if cfg.Redis.URL == "" {
		return nil, nil
	}
	password, err := cfg.Redis.RedisPassword()
	if err != nil {
		return nil, err
	}
	return cluster.Open(ctx, cluster.Options{URL: cfg.Redis.URL, Password: password, Logger: log})
}

// announce tells the replicas of a token change made by a command. Without
// Redis, or when it cannot be reached, they see it at their next refresh
// from the store (within a few seconds), and the command says so.
func announce(cmd *cobra.Command, cfg *config.Config, ev cluster.TokenEvent) {
	if cfg.Redis.URL == "" {
		return
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Second)
	defer cancel()
	r, err := openCluster(ctx, cfg, nil)
	if err == nil {
		defer r.Close()
		err = r.Publish(ctx, ev)
	}
	if err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "mcpgate: the replicas were not told at once (%v); they see it at their next refresh\n", err)
	}
}
