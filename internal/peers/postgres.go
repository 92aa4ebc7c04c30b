// postgres.go starts a real PostgreSQL server for a test: Debian's
// postgresql package, which scripts/peers.sh installs when it is missing.
// It makes a fresh cluster in a temporary folder, on a free loopback port,
// trusting local connections. It runs as an unprivileged user, as
// PostgreSQL refuses to run as root: as root the server runs as the
// postgres user. It is stopped when the test ends.

package peers

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Postgres is a running server.
type Postgres struct {
	Addr string // 127.0.0.1:PORT
	User string // the superuser: "mcpgate"
	DB   string // a database of its own: "mcpgate"
}

// DSN is the server's connection string for a driver.
func (p Postgres) DSN() string {
	return fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", p.User, p.Addr, p.DB)
}

// postgresBin is the folder of initdb and postgres, or "".
func postgresBin() string {
	if path, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(path); err == nil {
			return filepath.Dir(real)
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Strings(dirs)
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i]
		}
	}
	return ""
}

// HavePostgres reports whether PostgreSQL is installed.
func HavePostgres() bool { return postgresBin() != "" }

// StartPostgres starts a server for t, or skips t (fails it when
// MCPGATE_REQUIRE_PEERS is set) when PostgreSQL is not installed. It is
// stopped when t ends.
func StartPostgres(t testing.TB) Postgres {
	t.Helper()
	if postgresBin() == "" {
		if os.Getenv("MCPGATE_REQUIRE_PEERS") != "" {
			t.Fatal("PostgreSQL is not installed (scripts/peers.sh installs Debian's postgresql)")
		}
		t.Skip("PostgreSQL is not installed; scripts/peers.sh installs it")
	}
	p, stop, err := RunPostgres()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return p
}

// ErrNoPostgres is RunPostgres's error when PostgreSQL is not installed.
var ErrNoPostgres = errors.New("PostgreSQL is not installed (scripts/peers.sh installs Debian's postgresql)")

// RunPostgres starts a server in a temporary folder; stop stops it and
// removes the folder.
func RunPostgres() (p Postgres, stop func(), err error) {
	bin := postgresBin()
	if bin == "" {
		return p, nil, ErrNoPostgres
	}
	dir, err := os.MkdirTemp("", "mcpgate-pg-")
	if err != nil {
		return p, nil, err
	}
	// stopAll is kept apart from the named result stop, which an error's
	// return sets to nil before the deferred undo runs.
	var cleanups []func()
	stopAll := func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	cleanups = append(cleanups, func() { _ = os.RemoveAll(dir) })
	defer func() {
		if err != nil {
			stopAll()
		}
	}()
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return p, nil, fmt.Errorf("running as root, and there is no postgres user to run PostgreSQL as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return p, nil, err
		}
	}
	run := func(name string, args ...string) *exec.Cmd {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
		cmd.Dir = dir
		return cmd
	}
	data := filepath.Join(dir, "data")
	if out, err := run("initdb", "-D", data, "-U", "mcpgate", "-A", "trust", "-E", "UTF8", "--no-sync").CombinedOutput(); err != nil {
		return p, nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return p, nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	server := run("postgres", "-D", data, "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-k", dir,
		"-c", "fsync=off", "-c", "max_connections=1100", "-c", "shared_buffers=32MB")
	logFile, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return p, nil, err
	}
	server.Stdout, server.Stderr = logFile, logFile
	if err := server.Start(); err != nil {
		return p, nil, fmt.Errorf("postgres: %w", err)
	}
	cleanups = append(cleanups, func() {
		_ = syscall.Kill(-server.Process.Pid, syscall.SIGQUIT) // immediate shutdown
		_ = server.Wait()
		_ = logFile.Close()
	})
	p = Postgres{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), User: "mcpgate", DB: "postgres"}
	deadline := time.Now().Add(30 * time.Second)
	for {
		// pg_isready says when the server takes connections (accepting
		// on the port comes before that).
		err := exec.Command(filepath.Join(bin, "pg_isready"), "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(port)).Run()
		if err == nil {
			return p, stopAll, nil
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			return p, nil, fmt.Errorf("postgres is not ready on %s: %w\n%s", p.Addr, err, log)
		}
		time.Sleep(20 * time.Millisecond) // polling a server that is starting
	}
}
