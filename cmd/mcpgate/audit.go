// audit.go is `mcpgate audit tail`: the latest audit records, oldest first.

package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

func auditCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "Read the audit log"}
	var sf storeFlags
	var n int
	tail := &cobra.Command{
		Use:   "tail [-n N]",
		Short: "Show the latest audit records",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, st, err := sf.open(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			records, err := st.TailAudit(cmd.Context(), n)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "TIME\tSUBJECT\tTOKEN\tROLE\tKIND\tNAME\tBACKEND\tOUTCOME\tCODE\tDURATION")
			for _, r := range records {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", r.Time.Format(time.RFC3339Nano), r.Subject, r.TokenID,
					r.Role, r.Kind, r.Name, dash(r.Backend), r.Outcome, r.Code, r.Duration)
			}
			return w.Flush()
		},
	}
	sf.register(tail)
	tail.Flags().IntVarP(&n, "lines", "n", 20, "how many records")
	cmd.AddCommand(tail)
	return cmd
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
