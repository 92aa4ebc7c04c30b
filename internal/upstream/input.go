// input.go is the loop a client of a 2026-07-28 server runs when the
// server answers a call with input-required: ask for what the server
// asks, and make the call again with the answers, a bounded number of
// times.

package upstream

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mcpgate/mcpgate/mcp"
)

// MaxInputRounds is how many times one call is made again with input.
const MaxInputRounds = 8

// ErrKeepsAsking is WithInput's error when the server asked for input
// more than MaxInputRounds times.
var ErrKeepsAsking = errors.New("the server asked for input more times than a call is retried")

// WithInput calls call with params until the answer is not
// input-required. Each time it is, answer is given what the server asks
// for and returns the answers, in order; the next round's params carry
// them. An error from call or answer ends the loop.
func WithInput(ctx context.Context, params json.RawMessage,
	call func(ctx context.Context, params json.RawMessage) (json.RawMessage, error),
	answer func(ctx context.Context, inputs []mcp.Input) ([]json.RawMessage, error)) (json.RawMessage, error) {
	for round := 0; ; round++ {
		res, err := call(ctx, params)
		if err != nil || !mcp.IsInputRequired(res) {
			return res, err
		}
		if round == MaxInputRounds {
			return nil, ErrKeepsAsking
		}
		inputs := mcp.InputsOf(res)
		answers, err := answer(ctx, inputs)
		if err != nil {
			return nil, err
		}
		if params, err = mcp.RetryParams(params, res, inputs, answers); err != nil {
			return nil, err
		}
	}
}
