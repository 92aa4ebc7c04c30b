package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseLifetime reads a token's lifetime: a Go duration, or a number of
// days ("30d"), positive.
func ParseLifetime(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("%q is not a number of days", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration (write 12h or 30d)", s)
	}
	return d, nil
}
