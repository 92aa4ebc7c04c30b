// audit.go is `mcpgate audit tail`: the latest audit records, oldest first,
// as a table for people (every value escaped: printable.go) or as JSON
// lines for machines. A killed gateway's journal is read first.

package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpgate/mcpgate/internal/observe/audit"
)

func auditCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "Read the audit log"}
	var sf storeFlags
	var n int
	var asJSON bool
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
			// A killed gateway's last records may wait in its journal
			// (SQLite): they are written first, as its next start would.
			if j, ok := st.(audit.Journaled); ok {
				if err := audit.Recover(cmd.Context(), j, slog.New(slog.DiscardHandler)); err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "mcpgate: the journal of a stopped gateway was not read: %v\n", err)
				}
			}
			records, err := st.TailAudit(cmd.Context(), n)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetEscapeHTML(false)
				for _, r := range records {
					if err := enc.Encode(auditJSON{Time: r.Time, Subject: r.Subject, TokenID: r.TokenID, Role: r.Role,
						Kind: r.Kind, Name: r.Name, Backend: r.Backend, Outcome: r.Outcome, Code: r.Code,
						DurationMs: float64(r.Duration) / float64(time.Millisecond), Origin: r.Origin, Upstream: r.Upstream, Rule: r.Rule, Redacted: r.Redacted, Hooks: r.Hooks}); err != nil {
						return err
					}
				}
				return nil
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "TIME\tSUBJECT\tTOKEN\tROLE\tKIND\tNAME\tBACKEND\tOUTCOME\tCODE\tDURATION")
			for _, r := range records {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", r.Time.Format(time.RFC3339Nano), printable(r.Subject),
					printable(r.TokenID), printable(r.Role), printable(r.Kind), printable(r.Name), dash(printable(r.Backend)),
					printable(r.Outcome), r.Code, r.Duration)
			}
			return w.Flush()
		},
	}
	sf.register(tail)
	tail.Flags().IntVarP(&n, "lines", "n", 20, "how many records")
	tail.Flags().BoolVar(&asJSON, "json", false, "print one JSON object a line, for machines")
	cmd.AddCommand(tail)
	return cmd
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// auditJSON is one line of `audit tail --json`.
type auditJSON struct {
	Time       time.Time `json:"time"`
	Subject    string    `json:"subject"`
	TokenID    string    `json:"tokenId"`
	Role       string    `json:"role"`
	Kind       string    `json:"kind"`
	Name       string    `json:"name"`
	Backend    string    `json:"backend,omitempty"`
	Outcome    string    `json:"outcome"`
	Code       int64     `json:"code"`
	DurationMs float64   `json:"durationMs"`
	// Origin is the backend's own name of a renamed entry; Upstream whom
	// the call was made as at the backend ("vault:BACKEND").
	Origin   string `json:"origin,omitempty"`
	Upstream string `json:"upstream,omitempty"`
	// Rule is the policy rule (or interceptor) that denied the call;
	// Redacted what the redactor took out of its answer.
	Rule     string `json:"rule,omitempty"`
	Redacted string `json:"redacted,omitempty"`
	// Hooks is what interceptors came to other than allowing or denying.
	Hooks string `json:"hooks,omitempty"`
}
