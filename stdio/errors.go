// errors.go names the ways the line protocol fails, so that callers decide
// on values rather than on message text.

package stdio

import "errors"

var (
	// ErrLineTooLong reports an incoming line over the size limit. The line
	// has been consumed; the next one can be read.
	ErrLineTooLong = errors.New("stdio: line too long")

	// ErrMultiline reports an outgoing message whose line breaks are not
	// JSON whitespace (it is not valid JSON), so it cannot be put on one
	// line. Nothing is written.
	ErrMultiline = errors.New("stdio: message cannot be written on one line")

	// ErrClosed is returned by Conn.Write after Close.
	ErrClosed = errors.New("stdio: connection closed")
)
