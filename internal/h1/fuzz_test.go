// fuzz_test.go reads arbitrary bytes as an answer, against net/http's own
// reader: nothing panics, and what both read they read alike.

package h1

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
)

// readAnswer reads data as the answer to a POST, head and body.
func readAnswer(data []byte) (*http.Response, []byte, error) {
	a, b := net.Pipe()
	defer b.Close()
	t := New(&http.Transport{MaxResponseHeaderBytes: 1 << 16})
	c := newConn(t, &host{}, a)
	c.br = bufio.NewReaderSize(bytes.NewReader(data), 4096)
	req, _ := http.NewRequest(http.MethodPost, "http://example.test/", nil)
	o := outgoingOf(req)
	resp, err := c.read(context.Background(), &o, noStop, true)
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, body, err
}

// readAsNetHTTP reads data as net/http's client does: past 1xx answers.
func readAsNetHTTP(data []byte) (*http.Response, []byte, error) {
	br := bufio.NewReader(bytes.NewReader(data))
	req, _ := http.NewRequest(http.MethodPost, "http://example.test/", nil)
	for {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return nil, nil, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == 101 {
			body, err := io.ReadAll(resp.Body)
			return resp, body, err
		}
	}
}

func FuzzReadAnswer(f *testing.F) {
	for _, seed := range []string{
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\nok\r\n0\r\nT: 1\r\n\r\n",
		"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 202 Accepted\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\nto the end",
		"HTTP/1.1 200 OK\r\nx-a: 1\r\nX-A: 2\r\n folded\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n",
		"HTTP/1.1 200\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		resp, body, err := readAnswer(data)
		want, wantBody, wantErr := readAsNetHTTP(data)
		if err != nil || wantErr != nil {
			return // what one refuses the other may read: only agreement is checked
		}
		got := fmt.Sprint(resp.StatusCode, resp.Status, resp.Proto, resp.Header, resp.ContentLength, resp.Close, string(body))
		exp := fmt.Sprint(want.StatusCode, want.Status, want.Proto, want.Header, want.ContentLength, want.Close, string(wantBody))
		if got != exp {
			t.Errorf("read as\n%s\nnet/http reads\n%s", got, exp)
		}
	})
}
