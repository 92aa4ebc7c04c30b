//go:build !unix

package audit

import (
	"errors"
	"fmt"
	"os"
)

// errJournalBusy is lockJournal's answer for a lock another Log holds.
var errJournalBusy = errors.New("audit: the journal is in use")

// lockJournal, where flock is not to be had, takes a lock file only if
// there is none: a journal left by a process that ended is then taken
// over by hand (remove its lock file), never by another process's start.
func lockJournal(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil, errJournalBusy
	}
	if err != nil {
		return nil, fmt.Errorf("audit: journal: %w", err)
	}
	return f, nil
}
