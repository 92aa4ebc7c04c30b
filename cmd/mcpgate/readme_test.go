// readme_test.go keeps the README's command lines true to the binary:
// every `mcpgate …` line in a shell block names a command that exists,
// with flags it takes, and the README says how to put `mcpgate` on the
// PATH before it uses it.

package main

import (
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
)

// readmeShellLine is one line of a README sh block, its comment cut, and
// where it stands in the README (from 0).
type readmeShellLine struct {
	At   int
	Text string
}

// readmeShellLines are the non-empty lines of the README's sh blocks.
func readmeShellLines(t *testing.T) []readmeShellLine {
	t.Helper()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	comment := regexp.MustCompile(`\s+#\s.*$`)
	var out []readmeShellLine
	in := false
	for i, line := range strings.Split(string(raw), "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			in = true
		case strings.HasPrefix(line, "```"):
			in = false
		case in && strings.TrimSpace(line) != "":
			out = append(out, readmeShellLine{At: i, Text: strings.TrimSpace(comment.ReplaceAllString(line, ""))})
		}
	}
	return out
}

// readmeLines are the `mcpgate …` lines of the README's sh blocks, where
// the first of them stands, and where the install line does (-1: none).
func readmeLines(t *testing.T) (lines []string, firstAt int, installAt int) {
	t.Helper()
	firstAt, installAt = -1, -1
	for _, l := range readmeShellLines(t) {
		switch {
		case strings.HasPrefix(l.Text, "go install ./cmd/mcpgate"):
			installAt = l.At
		case strings.HasPrefix(l.Text, "mcpgate "):
			if firstAt < 0 {
				firstAt = l.At
			}
			lines = append(lines, l.Text)
		}
	}
	return lines, firstAt, installAt
}

// shellWords splits a line as a POSIX shell would, for the quoting the
// README uses (single quotes).
func shellWords(line string) []string {
	var out []string
	var cur strings.Builder
	quoted, any := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, any = !quoted, true
		case r == ' ' && !quoted:
			if any {
				out = append(out, cur.String())
				cur.Reset()
				any = false
			}
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if any {
		out = append(out, cur.String())
	}
	return out
}

func TestReadmeCommandLinesNameCommandsAndFlagsThatExist(t *testing.T) {
	lines, first, install := readmeLines(t)
	if len(lines) < 10 {
		t.Fatalf("found %d mcpgate lines in the README", len(lines))
	}
	if install < 0 || install > first {
		t.Errorf("the README uses mcpgate on line %d before saying how to install it (line %d)", first+1, install+1)
	}
	for _, line := range lines {
		if cmdLine, _, redirected := strings.Cut(line, " < "); redirected {
			line = cmdLine // standard input from a file, as the shell reads it
		}
		args := shellWords(line)[1:]
		root := rootCommand()
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		cmd, rest, err := root.Find(args)
		if err != nil || cmd == root {
			t.Errorf("%q: no such command (%v)", line, err)
			continue
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Errorf("%q: %v", line, err)
			continue
		}
		if cmd.Args != nil {
			if err := cmd.Args(cmd, cmd.Flags().Args()); err != nil {
				t.Errorf("%q: %v", line, err)
			}
		}
	}
}
