//go:build !linux

package audit

import (
	"errors"
	"os"
)

// mapSegments says segments are mapped into memory, not written: not on
// this system.
const mapSegments = false

var errNoMapping = errors.New("segments are not mapped on this system")

func mapSegment(*os.File, int64) ([]byte, error) { return nil, errNoMapping }
func unmapSegment([]byte)                        {}
func copyMapped([]byte, []byte) error            { return errNoMapping }
