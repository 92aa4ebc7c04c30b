// head.go reads an answer's status line and header fields. The fields'
// bytes are copied into one buffer, each name put in canonical form there,
// and made one string. Names and values are parts of that string, and
// values share one slice: a header of any size costs four allocations.

package h1

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// readHead reads a status line and its header fields from br. hdr is a
// buffer kept between answers; limit bounds the head's size.
func readHead(br *bufio.Reader, hdr *[]byte, limit int64) (*http.Response, error) {
	line, err := readLine(br)
	if err != nil {
		return nil, err
	}
	size := int64(len(line))
	resp := &http.Response{}
	if err := parseStatus(line, resp); err != nil {
		return nil, err
	}
	buf := (*hdr)[:0]
	fields := 0
	for {
		line, err := readLine(br)
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			break
		}
		if size += int64(len(line)); size > limit {
			return nil, errHeaderSize
		}
		if line[0] == ' ' || line[0] == '\t' {
			// An obsolete folded line continues the field above it.
			if fields == 0 {
				return nil, fmt.Errorf("%w: a header block starting with a folded line", errMalformed)
			}
			if !fieldValue(line) {
				return nil, fmt.Errorf("%w: header line %q", errMalformed, truncate(line))
			}
			buf = append(buf, ' ')
			buf = append(buf, bytes.Trim(line, " \t")...)
			continue
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !canonical(line[:colon]) || !fieldValue(line[colon+1:]) {
			return nil, fmt.Errorf("%w: header line %q", errMalformed, truncate(line))
		}
		if fields > 0 {
			buf = append(buf, '\n')
		}
		buf = append(buf, bytes.TrimRight(line, " \t")...)
		fields++
	}
	*hdr = buf
	resp.Header = make(http.Header, fields)
	if fields == 0 {
		return resp, nil
	}
	values := make([]string, fields)
	s := string(buf)
	for i := 0; len(s) > 0; i++ {
		line := s
		if j := strings.IndexByte(s, '\n'); j >= 0 {
			line, s = s[:j], s[j+1:]
		} else {
			s = ""
		}
		name, value, _ := strings.Cut(line, ":")
		if known, ok := commonNames[name]; ok {
			name = known
		}
		value = strings.TrimLeft(value, " \t") // as net/textproto does
		if vs, ok := resp.Header[name]; ok {
			resp.Header[name] = append(vs, value)
			continue
		}
		values[i] = value
		resp.Header[name] = values[i : i+1 : i+1]
	}
	return resp, nil
}

// readLine is the next line of br without its line ending; a bare LF ends
// a line too. It is valid until br's next read.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return nil, errHeaderSize
	}
	if err != nil {
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// parseStatus reads "HTTP/1.x NNN reason" into resp.
func parseStatus(line []byte, resp *http.Response) error {
	sp := bytes.IndexByte(line, ' ')
	if sp < 0 {
		return fmt.Errorf("%w: status line %q", errMalformed, truncate(line))
	}
	proto, rest := line[:sp], bytes.TrimLeft(line[sp+1:], " ")
	if len(rest) < 3 || (len(rest) > 3 && rest[3] != ' ') {
		return fmt.Errorf("%w: status line %q", errMalformed, truncate(line))
	}
	switch string(proto) {
	case "HTTP/1.1":
		resp.Proto, resp.ProtoMajor, resp.ProtoMinor = "HTTP/1.1", 1, 1
	case "HTTP/1.0":
		resp.Proto, resp.ProtoMajor, resp.ProtoMinor = "HTTP/1.0", 1, 0
	default:
		return fmt.Errorf("%w: status line %q", errMalformed, truncate(line))
	}
	code := 0
	for _, d := range rest[:3] {
		if d < '0' || d > '9' {
			return fmt.Errorf("%w: status line %q", errMalformed, truncate(line))
		}
		code = code*10 + int(d-'0')
	}
	if code < 100 {
		return fmt.Errorf("%w: status line %q", errMalformed, truncate(line))
	}
	resp.StatusCode = code
	if known, ok := statuses[code]; ok && len(rest) > 4 && string(rest[4:]) == http.StatusText(code) {
		resp.Status = known
	} else {
		resp.Status = string(rest)
	}
	return nil
}

// canonical checks that name is a header field name and puts it in
// canonical form in place, as net/textproto does.
func canonical(name []byte) bool {
	upper := true
	for i, ch := range name {
		if !httpToken(ch) {
			return false
		}
		switch {
		case upper && 'a' <= ch && ch <= 'z':
			name[i] = ch - ('a' - 'A')
		case !upper && 'A' <= ch && ch <= 'Z':
			name[i] = ch + ('a' - 'A')
		}
		upper = ch == '-'
	}
	return true
}

// fieldValue reports whether v holds no control character but a tab.
func fieldValue(v []byte) bool {
	for _, ch := range v {
		if ch < ' ' && ch != '\t' || ch == 0x7f {
			return false
		}
	}
	return true
}

// httpToken reports whether ch may appear in a header field name.
func httpToken(ch byte) bool {
	if 'a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z' || '0' <= ch && ch <= '9' {
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", ch) >= 0
}

// truncate is the start of a malformed line, for an error.
func truncate(line []byte) []byte {
	if len(line) > 64 {
		return line[:64]
	}
	return line
}

// commonNames are the names an answer's header carries most, kept as
// constants so that a name does not hold the whole head's string.
var commonNames = map[string]string{}

// statuses are the status texts of the codes an answer carries most, so
// that a usual status line allocates nothing.
var statuses = map[int]string{}

func init() {
	for _, n := range []string{"Cache-Control", "Connection", "Content-Encoding", "Content-Length",
		"Content-Type", "Date", "Keep-Alive", "Location", "Mcp-Protocol-Version", "Mcp-Session-Id",
		"Retry-After", "Server", "Set-Cookie", "Transfer-Encoding", "Vary", "Www-Authenticate",
		"X-Accel-Buffering", "Access-Control-Allow-Origin", "Access-Control-Expose-Headers"} {
		commonNames[n] = n
	}
	for code := 100; code < 600; code++ {
		if text := http.StatusText(code); text != "" {
			statuses[code] = strconv.Itoa(code) + " " + text
		}
	}
}
