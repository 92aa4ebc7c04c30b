// restart.go is the supervisor's loop: start the server, wait for its
// end, wait out the backoff (or not, when the supervisor itself replaced
// it), start it again — until Close.

package proxy

import (
	"fmt"
	"os"
	"time"

	"github.com/mcpgate/mcpgate/stdio"
)

// loop starts the server, waits for its end, and starts it again.
func (s *Supervisor) loop() {
	defer close(s.done)
	var delay time.Duration
	for first := true; ; first = false {
		if !first && !s.pause(delay) {
			return
		}
		c, err := s.start()
		if err != nil {
			if s.ctx.Err() != nil {
				return
			}
			delay = s.opts.Backoff.Next(delay, 0)
			s.log.Warn("upstream server did not start", "backend", s.name, "err", err, "retry_in", delay)
			continue
		}
		replaced, uptime := s.watch(c)
		switch {
		case s.ctx.Err() != nil:
			return
		case replaced:
			delay = 0
		default:
			delay = s.opts.Backoff.Next(delay, uptime)
			exit := exitStatus(c.conn.ExitErr())
			s.log.Warn("upstream server exited; restarting", "backend", s.name,
				"exit", exit, "uptime", uptime.Round(time.Millisecond), "restart_in", delay)
			s.setDown(fmt.Sprintf("exited (%s) after %v", exit, uptime.Round(time.Millisecond)), delay)
		}
	}
}

func (s *Supervisor) setDown(reason string, delay time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = &downtime{reason: reason, until: time.Now().Add(delay)}
	s.broadcastLocked()
}

func exitStatus(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// pause waits d (or less, when a feed kicks), reporting false at Close.
func (s *Supervisor) pause(d time.Duration) bool {
	if d <= 0 {
		return s.ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.kick:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// start runs one process with the current secrets.
func (s *Supervisor) start() (*child, error) {
	select {
	case <-s.kick: // this start serves any feed so far
	default:
	}
	s.mu.Lock()
	env, version := s.environLocked(), s.version
	s.mu.Unlock()
	conn, err := startCommand(s.ctx, s.command[0], s.command[1:], stdio.CommandOptions{
		Name: s.name, Env: env, Logger: s.log, GracePeriod: s.opts.GracePeriod,
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.broadcastLocked()
	s.down = nil
	if err != nil {
		s.last = attempt{version: version, err: fmt.Errorf("proxy: start the upstream server: %w", err)}
		return nil, s.last.err
	}
	s.last = attempt{version: version}
	s.starts++
	c := &child{conn: conn, started: time.Now(), stop: make(chan struct{}), gone: make(chan struct{})}
	if version != s.version {
		c.replaceLocked() // secrets were fed while it started
	}
	s.child = c
	s.log.Info("upstream server started", "backend", s.name, "pid", conn.Pid(), "start", s.starts)
	return c, nil
}

// environLocked is the process environment: the base, then the secrets
// (os/exec keeps the last of duplicate names, so secrets win).
func (s *Supervisor) environLocked() []string {
	base := s.opts.Env
	if base == nil {
		base = os.Environ()
	}
	return append(append([]string(nil), base...), s.secrets...)
}

// watch waits for c to exit or to be stopped, and then for it to be gone.
// replaced says the supervisor itself stopped it for another.
func (s *Supervisor) watch(c *child) (replaced bool, uptime time.Duration) {
	select {
	case <-c.conn.Done():
	case <-c.stop:
	case <-s.ctx.Done():
	}
	_ = c.conn.Close()
	uptime = time.Since(c.started)
	s.mu.Lock()
	replaced = c.replaced
	if s.child == c {
		s.child = nil
	}
	s.broadcastLocked()
	s.mu.Unlock()
	close(c.gone)
	return replaced, uptime
}
