//go:build unix

package audit

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockJournal takes the journal's lock file, so that a second process on
// the same database fails at start instead of replaying and removing the
// first one's segments. The lock goes with the file's closing, or the
// process.
func lockJournal(prefix string) (*os.File, error) {
	f, err := os.OpenFile(prefix+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: journal: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("audit: the journal %s is in use by another process: one mcpgate serve per SQLite database (replicas share PostgreSQL)", prefix)
		}
		return nil, fmt.Errorf("audit: journal lock: %w", err)
	}
	return f, nil
}
