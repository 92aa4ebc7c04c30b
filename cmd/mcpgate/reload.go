// reload.go makes `mcpgate serve` follow its configuration. On SIGHUP, or
// when the content of the --config file changes, the file is read again
// with the same flags over it. It is applied to the running gateway;
// gateway.Reload says what is applied and what needs a restart. A file that
// does not load or validate is refused with an error naming the key, and
// the gateway keeps serving what it ran.
//
// The file is polled by content hash (once a second by default,
// --config-poll) rather than watched through inotify. An editor that saves
// by writing a new file and renaming it over the old one leaves a watch on
// a dead inode. Reading one small file a second costs nothing and needs no
// dependency. A change is applied once the content has stayed the same for
// one poll, so that a file being written in place is not applied
// half-written.

package main

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpgate/mcpgate/internal/gateway"
)

// followConfig reloads gw on SIGHUP and on a change of f.config until ctx
// ends; the returned function stops following and waits for it.
func followConfig(ctx context.Context, f serveFlags, gw *gateway.Gateway, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	r := &reloader{flags: f, gw: gw, log: log}
	if f.config != "" {
		r.sum, _ = r.read()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var tick <-chan time.Time
		if f.config != "" && f.configPoll > 0 {
			t := time.NewTicker(f.configPoll)
			defer t.Stop()
			tick = t.C
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				if f.config == "" {
					log.Info("SIGHUP: there is no --config file; the flags are read again, and they have not changed")
				} else {
					r.sum, _ = r.read()
				}
				r.reload(ctx, "SIGHUP")
			case <-tick:
				if r.settled() {
					r.reload(ctx, "file changed")
				}
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		cancel()
		<-done
	}
}

// reloader remembers what it last read of the file.
type reloader struct {
	flags   serveFlags
	gw      *gateway.Gateway
	log     *slog.Logger
	sum     [sha256.Size]byte // of the content last applied (or refused)
	pending [sha256.Size]byte // of a new content seen once
	readErr string            // the last read error logged, so that it is logged once
}

// read hashes the file's content; a failure (the file gone for a moment,
// between an editor's delete and rename) is logged once and changes
// nothing.
func (r *reloader) read() ([sha256.Size]byte, bool) {
	b, err := os.ReadFile(r.flags.config)
	if err != nil {
		if msg := err.Error(); msg != r.readErr {
			r.readErr = msg
			r.log.Warn("configuration file unreadable; the running configuration stays", "file", r.flags.config, "err", err)
		}
		return r.sum, false
	}
	r.readErr = ""
	return sha256.Sum256(b), true
}

// settled reports a content that differs from the last applied and has
// stayed the same for one poll: a file caught while it is being written
// in place (empty, or cut short but still valid) is not applied.
func (r *reloader) settled() bool {
	sum, ok := r.read()
	if !ok || sum == r.sum {
		return false
	}
	if sum != r.pending {
		r.pending = sum
		return false
	}
	r.sum = sum
	return true
}

// reload loads the file with the flags over it and applies it.
func (r *reloader) reload(ctx context.Context, why string) {
	cfg, err := loadConfig(r.flags)
	if err == nil {
		_, err = addDemo(cfg)
	}
	if err != nil {
		r.log.Error("reload refused; the running configuration stays", "trigger", why, "file", r.flags.config, "err", err)
		return
	}
	rep, err := r.gw.Reload(ctx, cfg)
	if err != nil {
		r.log.Error("reload refused; the running configuration stays", "trigger", why, "file", r.flags.config, "err", err)
		return
	}
	r.log.Info("configuration reloaded", "trigger", why, "file", r.flags.config,
		"added", rep.Added, "removed", rep.Removed, "restarted", rep.Restarted,
		"unchanged", len(rep.Unchanged), "rate_limits", rep.RateLimits, "policy", rep.Policy, "need_restart", rep.NeedRestart)
}
