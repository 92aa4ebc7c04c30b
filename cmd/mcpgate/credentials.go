// credentials.go is `mcpgate credentials`: an admin stores, lists and
// deletes people's own credentials for per_user backends (the vault), and
// revokes a person's own authorization of a backend of oauth.
// A value is read from standard input, never from an argument (which
// other users of the machine can read, and shells keep in their
// history), and is never printed again.

package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpgate/mcpgate/internal/auth"
	"github.com/mcpgate/mcpgate/internal/auth/personal"
	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/gateway"
	"github.com/mcpgate/mcpgate/internal/store"
	"github.com/mcpgate/mcpgate/internal/upstream"
)

func credentialsCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "credentials", Short: "Store people's own credentials for per_user backends (the vault)"}
	cmd.AddCommand(credentialsSetCommand(), credentialsListCommand(), credentialsDeleteCommand())
	return cmd
}

// principalFlags name whom a credential is for: a service token id
// (tok_…), or a subject of the JWT issuer (auth.jwt.issuer unless
// --issuer says).
type principalFlags struct{ of, issuer string }

func (f *principalFlags) register(cmd *cobra.Command, required bool) {
	cmd.Flags().StringVar(&f.of, "for", "", "whose: a service token id (tok_…) or a subject")
	cmd.Flags().StringVar(&f.issuer, "issuer", "", "the issuer of the subject's tokens (default auth.jwt.issuer)")
	if required {
		_ = cmd.MarkFlagRequired("for")
	}
}

// principal is the principal f names ("" for none).
func (f principalFlags) principal(cfg *config.Config) string {
	if f.of == "" {
		return ""
	}
	if id, ok := auth.PrincipalToken(f.of); ok {
		return id
	}
	issuer := f.issuer
	if issuer == "" {
		issuer = cfg.Auth.JWT.Issuer
	}
	return auth.SubjectPrincipal(issuer, f.of)
}

// shownPrincipal is a principal as the list prints it.
func shownPrincipal(p string) string {
	if rest, ok := strings.CutPrefix(p, "subject:"); ok {
		issuer, subject, _ := strings.Cut(rest, "\x01")
		return printable(subject) + " (issuer " + dash(printable(issuer)) + ")"
	}
	return printable(p)
}

// vault opens the people's credentials, or says why it cannot.
func vault(cfg *config.Config, st store.Store) (*personal.Credentials, error) {
	c, err := gateway.OpenCredentials(cfg, st)
	if err == nil && c == nil {
		err = errors.New("no vault key is configured: set vault.key_from or vault.key_file, as the gateway has them")
	}
	return c, err
}

func credentialsSetCommand() *cobra.Command {
	var sf storeFlags
	var pf principalFlags
	cmd := &cobra.Command{
		Use:   "set BACKEND --for PRINCIPAL",
		Short: "Store PRINCIPAL's credential for a per_user backend, read from standard input",
		Args:  cobra.ExactArgs(1),
		// It makes the store, as token create does: an admin may store
		// people's keys before the gateway first starts.
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := sf.load()
			if err != nil {
				return err
			}
			backend := args[0]
			if err := gateway.VaultBackend(cfg, backend); err != nil {
				return fmt.Errorf("%s: %w", printable(backend), err)
			}
			st, err := openStore(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			defer st.Close()
			v, err := vault(cfg, st)
			if err != nil {
				return err
			}
			in, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), personal.MaxValueBytes+2))
			if err != nil {
				return err
			}
			value := strings.TrimSuffix(strings.TrimSuffix(string(in), "\n"), "\r")
			if err := v.Set(cmd.Context(), pf.principal(cfg), backend, value); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "stored %s's credential for %s (it is not shown again)\n", shownPrincipal(pf.principal(cfg)), printable(backend))
			return nil
		},
	}
	sf.register(cmd)
	pf.register(cmd, true)
	return cmd
}

func credentialsListCommand() *cobra.Command {
	var sf storeFlags
	var pf principalFlags
	cmd := &cobra.Command{
		Use:   "list [--for PRINCIPAL]",
		Short: "List the stored credentials: whose, for which backend, since when (never the values)",
		Args:  cobra.NoArgs,
		RunE: sf.withStore(func(cmd *cobra.Command, _ []string, cfg *config.Config, st store.Store) error {
			list, err := st.PersonalCredentials(cmd.Context(), pf.principal(cfg))
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "PRINCIPAL\tBACKEND\tKIND\tSTORED")
			for _, c := range list {
				kind := map[string]string{upstream.WayVault: "key", upstream.WayOAuth: "authorization"}[gateway.PersonalWay(cfg, c.Backend)]
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", shownPrincipal(c.Principal), printable(c.Backend), dash(kind), c.UpdatedAt.Format(time.RFC3339))
			}
			return w.Flush()
		}),
	}
	sf.register(cmd)
	pf.register(cmd, false)
	return cmd
}

func credentialsDeleteCommand() *cobra.Command {
	var sf storeFlags
	var pf principalFlags
	cmd := &cobra.Command{
		Use:   "delete BACKEND --for PRINCIPAL",
		Short: "Delete PRINCIPAL's credential for a backend (an authorization is revoked at its server first): their next call, on every replica, has none",
		Args:  cobra.ExactArgs(1),
		RunE: sf.withStore(func(cmd *cobra.Command, args []string, cfg *config.Config, st store.Store) error {
			who, backend := pf.principal(cfg), args[0]
			if _, err := st.PersonalCredential(cmd.Context(), who, backend); err == nil && gateway.PersonalWay(cfg, backend) == upstream.WayOAuth {
				had, err := gateway.ForgetAuthorization(cmd.Context(), cfg, st, backend, who)
				switch {
				case err != nil && !had:
					return err
				case err != nil:
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s's token could not be revoked at %s's authorization server (%v): revoke the gateway's access there too\n",
						shownPrincipal(who), printable(backend), err)
				case had:
					fmt.Fprintf(cmd.ErrOrStderr(), "revoked %s's authorization of %s at its authorization server\n", shownPrincipal(who), printable(backend))
				}
			}
			err := st.DeletePersonalCredential(cmd.Context(), who, backend)
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("%s has no credential stored for %s (mcpgate credentials list)", shownPrincipal(pf.principal(cfg)), printable(args[0]))
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "deleted %s's credential for %s\n", shownPrincipal(pf.principal(cfg)), printable(args[0]))
			return nil
		}),
	}
	sf.register(cmd)
	pf.register(cmd, true)
	return cmd
}
