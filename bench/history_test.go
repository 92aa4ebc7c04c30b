package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A full run is appended to the history, after the runs already there (a
// file of the older form, one run's results, becomes the first), and the
// chart draws the runs' ratios with their targets.
func TestAFullRunIsAppendedToTheHistoryAndCharted(t *testing.T) {
	dir := t.TempDir()
	path, svg := filepath.Join(dir, "benchmarks.json"), filepath.Join(dir, "benchmarks-history.svg")
	old := results{Started: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC), Ratios: []ratio{
		{Name: "mcpgate-http / null-relay calls/s (c=16)", Value: 0.71, Unit: "×", Target: "≥ 0.7", Met: true}}}
	b, _ := json.Marshal(old)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{0.63, 0.86} {
		r := &results{Started: time.Now(), Ratios: []ratio{{Name: "mcpgate-http / null-relay calls/s (c=16)", Value: v, Unit: "×", Target: "≥ 0.85"}}}
		if err := appendHistory(path, svg, r); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var h history
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	var got []float64
	for _, run := range h.Runs {
		got = append(got, run.Ratios[0].Value)
	}
	if len(got) != 3 || got[0] != 0.71 || got[1] != 0.63 || got[2] != 0.86 || h.Runs[0].Commit != "earlier" {
		t.Fatalf("history %v (first commit %q), want the older run then the two appended", got, h.Runs[0].Commit)
	}
	chart, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "<polyline", "0.86×", "target 0.85×", "stroke-dasharray"} {
		if !strings.Contains(string(chart), want) {
			t.Errorf("the chart has no %q", want)
		}
	}
}

// A figure given twice in a run, measured two ways, is drawn once: the
// one with the target, the other being a reference.
func TestAFigureGivenTwoWaysIsChartedOnceByItsTarget(t *testing.T) {
	name := "mcpgate-http-2026 / mcpgate-http calls/s (c=16"
	h := history{Runs: []historyRun{
		{Commit: "a", Ratios: []ratio{{Name: name + "): a sessionless call", Value: 0.91, Unit: "×", Target: "≥ 0.95"}}},
		{Commit: "b", Ratios: []ratio{
			{Name: name + "): a sessionless call", Value: 0.88, Unit: "×", Target: "(reference: windows apart)"},
			{Name: name + ", in turns of 100 ms): a sessionless call", Value: 0.97, Unit: "×", Target: "≥ 0.95"}}},
	}}
	chart := h.chart()
	for _, want := range []string{"0.91×", "0.97×"} {
		if !strings.Contains(chart, want) {
			t.Errorf("the chart has no %s", want)
		}
	}
	if strings.Contains(chart, "0.88×") {
		t.Error("the reference figure is charted beside the target's")
	}
}
