package main

import (
	"slices"
	"strings"
	"testing"
)

// A figure computed from two rows is also given for each round's windows
// alone, so that a reader sees how far it moved within the run; a run of
// one round gives no spread.
func TestAFigureIsAlsoGivenForEachRoundAlone(t *testing.T) {
	round := func(callsPerSec, p50 float64) stats { return stats{CallsPerSec: callsPerSec, P50us: p50} }
	rows := func(rounds int) []row {
		gw := []stats{round(900, 400), round(800, 380), round(1000, 450)}[:rounds]
		null := []stats{round(1000, 350), round(1000, 390), round(1000, 400)}[:rounds]
		return []row{
			{Path: "mcpgate-http", Load: "closed c=16", Stats: round(900, 0), Rounds: gw},
			{Path: "null-relay", Load: "closed c=16", Stats: round(1000, 0), Rounds: null},
			{Path: "mcpgate-http", Load: "closed c=1", Stats: round(0, 410), Rounds: gw},
			{Path: "null-relay", Load: "closed c=1", Stats: round(0, 380), Rounds: null},
		}
	}
	figure := func(r *results, name string) ratio {
		for _, x := range r.Ratios {
			if x.Name == name {
				return x
			}
		}
		t.Fatalf("no figure %q", name)
		return ratio{}
	}
	r := &results{Rows: rows(3)}
	r.ratios()
	if got := figure(r, "mcpgate-http / null-relay calls/s (c=16)").Rounds; !slices.Equal(got, []float64{0.9, 0.8, 1.0}) {
		t.Errorf("calls/s ratio by round: %v, want [0.9 0.8 1]", got)
	}
	c1 := figure(r, "mcpgate-http p50 − null-relay p50 (c=1)")
	if c1.Value != 30 || !slices.Equal(c1.Rounds, []float64{50, -10, 50}) {
		t.Errorf("c=1 gap %v by round %v, want 30 and [50 -10 50]", c1.Value, c1.Rounds)
	}
	if md := r.markdown(); !strings.Contains(md, "| 30.00 µs (rounds -10.00 to 50.00) |") {
		t.Errorf("the table does not give the c=1 gap's spread:\n%s", md)
	}
	one := &results{Rows: rows(1)}
	one.ratios()
	if got := figure(one, "mcpgate-http p50 − null-relay p50 (c=1)").Rounds; got != nil {
		t.Errorf("one round gave a spread: %v", got)
	}
}
