// oauth.go is `mcpgate oauth`: the grants the built-in authorization
// server made (auth.oauth.builtin), and their revocation. A revocation
// here holds at once for new tokens; a serving gateway stops accepting the
// grant's access tokens within seconds (they are checked against the
// store, with a short cache).

package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/store"
)

func oauthCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "oauth", Short: "The built-in authorization server's grants"}
	cmd.AddCommand(oauthGrantsCommand(), oauthRevokeCommand())
	return cmd
}

func oauthGrantsCommand() *cobra.Command {
	var sf storeFlags
	cmd := &cobra.Command{
		Use:   "grants",
		Short: "List the grants people consented to (never a token)",
		Args:  cobra.NoArgs,
		RunE: sf.withStore(func(cmd *cobra.Command, _ []string, _ *config.Config, st store.Store) error {
			grants, err := st.OAuthGrants(cmd.Context())
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tSUBJECT\tROLE\tCLIENT\tSIGNED IN WITH\tCREATED\tSTATUS")
			now := time.Now()
			for _, g := range grants {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", printable(g.ID), printable(g.Subject), printable(g.Role),
					printable(g.ClientName), printable(g.TokenID), g.CreatedAt.Format(time.RFC3339), standing(g.RevokedAt, g.Active(now)))
			}
			return w.Flush()
		}),
	}
	sf.register(cmd)
	return cmd
}

// standing is a token's or a grant's status column: revoked (when),
// expired, or active.
func standing(revokedAt time.Time, active bool) string {
	switch {
	case !revokedAt.IsZero():
		return "revoked " + revokedAt.Format(time.RFC3339)
	case !active:
		return "expired"
	}
	return "active"
}

func oauthRevokeCommand() *cobra.Command {
	var sf storeFlags
	cmd := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a grant: its refresh token and access tokens stop working",
		Args:  cobra.ExactArgs(1),
		RunE: sf.withStore(func(cmd *cobra.Command, args []string, _ *config.Config, st store.Store) error {
			at := time.Now().UTC()
			g, err := st.OAuthGrant(cmd.Context(), args[0])
			if err == nil {
				err = st.RevokeOAuthGrant(cmd.Context(), args[0], at)
			}
			if err != nil {
				return fmt.Errorf("revoke %s: %w", printable(args[0]), err)
			}
			if err := st.AppendAudit(cmd.Context(), []store.AuditRecord{{Time: at, Subject: g.Subject, TokenID: g.ID, Role: g.Role,
				Kind: "oauth", Name: "revoke", Outcome: "ok"}}); err != nil {
				return fmt.Errorf("revoked %s, but the audit record was not written: %w", printable(args[0]), err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "revoked %s\n", printable(args[0]))
			return nil
		}),
	}
	sf.register(cmd)
	return cmd
}
