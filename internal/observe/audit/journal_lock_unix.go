//go:build unix

package audit

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// errJournalBusy is lockJournal's answer for a lock another Log holds.
var errJournalBusy = errors.New("audit: the journal is in use")

// lockJournal takes the lock file at path: a journal's, held while its Log
// runs. The lock goes with the file's closing, or the process.
func lockJournal(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: journal: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errJournalBusy
		}
		return nil, fmt.Errorf("audit: journal lock: %w", err)
	}
	return f, nil
}
