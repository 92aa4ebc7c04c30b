package peers

import (
	"os"
	"os/user"
	"testing"
)

// A start that fails part way returns its error and removes its folder;
// it does not panic on the way out.
func TestPostgresStartThatFailsReturnsItsErrorAndLeavesNoFolder(t *testing.T) {
	if !HavePostgres() {
		t.Skip("PostgreSQL is not installed")
	}
	if os.Geteuid() != 0 {
		t.Skip("the failure is made by a folder that root may enter and the postgres user may not")
	}
	if _, err := user.Lookup("postgres"); err != nil {
		t.Skip("no postgres user")
	}
	parent := t.TempDir()
	if err := os.Chmod(parent, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", parent)
	_, stop, err := RunPostgres()
	if err == nil {
		stop()
		t.Fatal("PostgreSQL started in a folder its user cannot enter")
	}
	if stop != nil {
		t.Errorf("a failed start returned a stop function")
	}
	left, rerr := os.ReadDir(parent)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if len(left) != 0 {
		t.Errorf("a failed start left %d entries in its temporary folder", len(left))
	}
	t.Logf("the error: %v", err)
}
