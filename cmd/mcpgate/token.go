// token.go is `mcpgate token`: create, list and revoke service tokens in
// the store. A created token is printed once and never again: only its
// hash is kept. A running gateway picks up revocations within seconds.

package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpgate/mcpgate/internal/auth"
	"github.com/mcpgate/mcpgate/internal/cluster"
	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/store"
)

// storeFlags are the flags every store command takes.
type storeFlags struct{ config, store, redis string }

func (f *storeFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.config, "config", "", "configuration file (YAML)")
	cmd.Flags().StringVar(&f.store, "store", "", "SQLite database (default "+config.DefaultStorePath()+"), or postgres://USER@HOST/DB (password: PGPASSWORD)")
}

// registerAnnouncing adds --redis to the store flags: the commands that
// change tokens tell the replicas through it.
func (f *storeFlags) registerAnnouncing(cmd *cobra.Command) {
	f.register(cmd)
	cmd.Flags().StringVar(&f.redis, "redis", "", "Redis of the replicas, told of the token changed here (redis://HOST:PORT/DB)")
}

func (f *storeFlags) load() (*config.Config, error) {
	return loadConfig(serveFlags{config: f.config, store: f.store, redis: f.redis})
}

// open loads the configuration and opens its store, which must exist: a
// command that reads or revokes refuses a mistyped --store instead of
// creating an empty database there. The caller closes it.
func (f *storeFlags) open(ctx context.Context) (*config.Config, store.Store, error) {
	cfg, err := f.load()
	if err != nil {
		return nil, nil, err
	}
	if !config.StoreIsPostgres(cfg.Store) {
		if _, err := os.Stat(cfg.Store); errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("no store at %s: nothing was created there (mcpgate serve, mcpgate token create and mcpgate credentials set make one); check --store or store: in the configuration", printable(cfg.Store))
		}
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return cfg, st, nil
}

// withStore is a command's RunE that opens the store, runs fn with it and
// closes it.
func (f *storeFlags) withStore(fn func(cmd *cobra.Command, args []string, cfg *config.Config, st store.Store) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		cfg, st, err := f.open(cmd.Context())
		if err != nil {
			return err
		}
		defer st.Close()
		return fn(cmd, args, cfg, st)
	}
}

func tokenCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "token", Short: "Manage service tokens"}
	cmd.AddCommand(tokenCreateCommand(), tokenListCommand(), tokenRevokeCommand())
	return cmd
}

func tokenCreateCommand() *cobra.Command {
	var sf storeFlags
	var name, role, expires string
	cmd := &cobra.Command{
		Use:   "create --name NAME --role ROLE [--expires DURATION]",
		Short: "Create a service token and print it (once)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := sf.load()
			if err != nil {
				return err
			}
			if !cfg.KnownRole(role) {
				return fmt.Errorf("--role: unknown role %q (viewer, editor, admin, or a role in the configuration)", role)
			}
			var exp time.Time
			if expires != "" {
				d, err := config.ParseLifetime(expires)
				if err != nil {
					return fmt.Errorf("--expires: %w", err)
				}
				exp = time.Now().Add(d).UTC()
			}
			st, err := openStore(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			defer st.Close()
			secret, rec, err := auth.NewTokens(st, nil).Create(cmd.Context(), name, role, exp)
			if err != nil {
				return err
			}
			announce(cmd, cfg, cluster.TokenEvent{ID: rec.ID})
			fmt.Fprintf(cmd.ErrOrStderr(), "created %s (%s, role %s%s); the token is printed once:\n", rec.ID, printable(rec.Name), printable(rec.Role), expiry(rec.ExpiresAt))
			fmt.Fprintln(cmd.OutOrStdout(), secret)
			return nil
		},
	}
	sf.registerAnnouncing(cmd)
	cmd.Flags().StringVar(&name, "name", "", "what the token is for (required)")
	cmd.Flags().StringVar(&role, "role", "", "role of the token's holder (required)")
	cmd.Flags().StringVar(&expires, "expires", "", "lifetime, e.g. 12h or 30d (default: never)")
	_ = cmd.MarkFlagRequired("name")
	_ = cmd.MarkFlagRequired("role")
	return cmd
}

func tokenListCommand() *cobra.Command {
	var sf storeFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List service tokens (never their secrets)",
		Args:  cobra.NoArgs,
		RunE: sf.withStore(func(cmd *cobra.Command, _ []string, _ *config.Config, st store.Store) error {
			tokens, err := st.Tokens(cmd.Context())
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tNAME\tROLE\tCREATED\tEXPIRES\tSTATUS")
			now := time.Now()
			for _, t := range tokens {
				status := standing(t.RevokedAt, t.Active(now))
				exp := "never"
				if !t.ExpiresAt.IsZero() {
					exp = t.ExpiresAt.Format(time.RFC3339)
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", printable(t.ID), printable(t.Name), printable(t.Role), t.CreatedAt.Format(time.RFC3339), exp, status)
			}
			return w.Flush()
		}),
	}
	sf.register(cmd)
	return cmd
}

func tokenRevokeCommand() *cobra.Command {
	var sf storeFlags
	cmd := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a service token",
		Args:  cobra.ExactArgs(1),
		RunE: sf.withStore(func(cmd *cobra.Command, args []string, cfg *config.Config, st store.Store) error {
			at := time.Now().UTC()
			if err := st.RevokeToken(cmd.Context(), args[0], at); err != nil {
				return fmt.Errorf("revoke %s: %w", printable(args[0]), err)
			}
			announce(cmd, cfg, cluster.TokenEvent{ID: args[0], RevokedAt: at})
			fmt.Fprintf(cmd.OutOrStdout(), "revoked %s\n", printable(args[0]))
			return nil
		}),
	}
	sf.registerAnnouncing(cmd)
	return cmd
}

func expiry(t time.Time) string {
	if t.IsZero() {
		return ", no expiry"
	}
	return ", expires " + t.Format(time.RFC3339)
}
