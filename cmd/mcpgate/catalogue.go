// catalogue.go is `mcpgate catalogue`: the tool and prompt definitions a
// backend changed from the approved one (catalogue.pinning), and their
// approval or rejection. The store is shared: a running gateway, and
// every replica, releases an approved entry within seconds.

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/store"
)

func catalogueCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "catalogue", Short: "Review changed tool and prompt definitions (catalogue.pinning)"}
	cmd.AddCommand(cataloguePendingCommand(), catalogueDecideCommand("approve"), catalogueDecideCommand("reject"))
	return cmd
}

func cataloguePendingCommand() *cobra.Command {
	var sf storeFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "pending",
		Short: "List the changed definitions awaiting approval",
		Args:  cobra.NoArgs,
		RunE: sf.withStore(func(cmd *cobra.Command, _ []string, _ *config.Config, st store.Store) error {
			pins, err := st.PendingPins(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				type change struct {
					Backend, Kind, Name string
					Since               time.Time
					Approved, Changed   json.RawMessage
				}
				out := make([]change, len(pins))
				for i, p := range pins {
					out[i] = change{p.Backend, p.Kind, p.Name, p.PendingSince, p.Definition, p.PendingDefinition}
				}
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			if len(pins) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "no definition awaits approval")
				return nil
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "BACKEND\tKIND\tNAME\tCHANGED SINCE\tAPPROVED BY")
			for _, p := range pins {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", printable(p.Backend), p.Kind, printable(p.Name),
					p.PendingSince.Format(time.RFC3339), printable(p.ApprovedBy))
			}
			return w.Flush()
		}),
	}
	sf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print each change with both definitions, as JSON")
	return cmd
}

// catalogueDecideCommand is approve or reject of BACKEND NAME's pending
// change.
func catalogueDecideCommand(verb string) *cobra.Command {
	var sf storeFlags
	var kind, by string
	cmd := &cobra.Command{
		Use:   verb + " BACKEND NAME",
		Short: map[string]string{"approve": "Approve a changed definition: it is served as changed", "reject": "Reject a changed definition: it stays withheld"}[verb],
		Args:  cobra.ExactArgs(2),
		RunE: sf.withStore(func(cmd *cobra.Command, args []string, _ *config.Config, st store.Store) error {
			backend, name := args[0], args[1]
			pins, err := st.PendingPins(cmd.Context())
			if err != nil {
				return err
			}
			for _, p := range pins {
				if p.Backend != backend || p.Name != name || p.Kind != kind {
					continue
				}
				if verb == "approve" {
					err = st.ApprovePin(cmd.Context(), backend, kind, name, p.Pending, by, time.Now().UTC())
				} else {
					err = st.RejectPin(cmd.Context(), backend, kind, name, p.Pending)
				}
				if errors.Is(err, store.ErrNotFound) {
					return fmt.Errorf("the change of %s %s of %s was decided meanwhile, or changed again: look again (mcpgate catalogue pending)", kind, printable(name), printable(backend))
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "%sd the change of %s %s of %s\n", verb, kind, printable(name), printable(backend))
				return nil
			}
			return fmt.Errorf("no change of %s %s of %s awaits approval (mcpgate catalogue pending lists them)", kind, printable(name), printable(backend))
		}),
	}
	sf.register(cmd)
	cmd.Flags().StringVar(&kind, "kind", "tool", "tool or prompt")
	if verb == "approve" {
		cmd.Flags().StringVar(&by, "by", "cli", "who approves, as the pin records it")
	}
	return cmd
}
