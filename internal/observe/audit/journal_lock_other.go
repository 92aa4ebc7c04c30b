//go:build !unix

package audit

import (
	"fmt"
	"os"
)

// lockJournal only holds the lock file open where flock is not to be had.
func lockJournal(prefix string) (*os.File, error) {
	f, err := os.OpenFile(prefix+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: journal: %w", err)
	}
	return f, nil
}
