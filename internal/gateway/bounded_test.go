// bounded_test.go pins that every route that is not MCP's — the console's
// sign-in, the built-in authorization server's endpoints, the backend
// OAuth callback, the metadata, health — reads a bounded body within a
// deadline, and parses no multipart form: a large form is answered 413, a
// multipart one 415 with nothing written to the temporary folder, a slow
// one 408; and eight large posts at once cost the process little.

package gateway_test

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/auth/authserver"
	"github.com/mcpgate/mcpgate/internal/auth/oauthclient"
	"github.com/mcpgate/mcpgate/internal/testkit"
)

// repeated is an endless form body of "a=xxxx…", n bytes long, made as it
// is read (the client allocates nothing of its size).
func repeated(n int64) io.Reader {
	return io.LimitReader(io.MultiReader(strings.NewReader("a="), neverEnding('x')), n)
}

type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

func TestEveryRouteThatIsNotMCPBoundsItsBody(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where net/http's multipart parsing would spill
	e := gwStart(t, "listen: 127.0.0.1:0\nhttp: {body_timeout: 300ms}\n"+
		"auth: {oauth: {resource: http://127.0.0.1:8080/mcp, builtin: true}}\n"+
		"backends:\n  - {name: b, kind: http, url: http://127.0.0.1:9/mcp}\n")
	routes := []string{"/admin/login", authserver.TokenPath, authserver.RegisterPath, authserver.RevokePath,
		authserver.AuthorizePath, oauthclient.CallbackPath, "/healthz", "/.well-known/oauth-protected-resource/mcp"}
	post := func(path, contentType string, body io.Reader, length int64) int {
		req, _ := http.NewRequestWithContext(testkit.Context(t), http.MethodPost, e.base+path, body)
		req.ContentLength = length
		req.Header.Set("Content-Type", contentType)
		resp, err := e.client.Do(req)
		if err != nil {
			return -1 // the server closed the connection while the body was still being sent
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	for _, path := range routes {
		t.Run(path, func(t *testing.T) {
			if got := post(path, "application/x-www-form-urlencoded", repeated(1<<20), -1); got != http.StatusRequestEntityTooLarge && got != -1 {
				t.Errorf("a 1 MiB form: %d, want 413", got)
			}
			if got := post(path, "application/x-www-form-urlencoded", repeated(1<<20), 1<<20); got != http.StatusRequestEntityTooLarge {
				t.Errorf("a 1 MiB form announced: %d, want 413", got)
			}
			var mp bytes.Buffer
			w := multipart.NewWriter(&mp)
			fw, _ := w.CreateFormFile("token", "big.bin")
			_, _ = io.Copy(fw, io.LimitReader(neverEnding('y'), 40<<10))
			_ = w.Close()
			if got := post(path, w.FormDataContentType(), bytes.NewReader(mp.Bytes()), int64(mp.Len())); got != http.StatusUnsupportedMediaType {
				t.Errorf("a multipart form: %d, want 415", got)
			}
			if got := slowPost(t, e.base, path); got != http.StatusRequestTimeout {
				t.Errorf("a form dripped a byte at a time: %d, want 408", got)
			}
		})
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the temporary folder holds %d files after the posts", len(left))
	}

	// Eight 30 MB posts at once to the sign-in page: what the process
	// allocates for them all stays far below one of them.
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			post("/admin/login", "application/x-www-form-urlencoded", repeated(30<<20), 30<<20)
		}()
	}
	wg.Wait()
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
		t.Errorf("eight 30 MB posts allocated %d MiB", grew>>20)
	}
}

// slowPost sends a form's headers and one byte of its body, then waits
// for the answer, which the server must give at its body deadline.
func slowPost(t *testing.T, base, path string) int {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second)) // a bound on the test, not its clock
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nt",
		path, strings.TrimPrefix(base, "http://"))
	var status int
	if _, err := fmt.Fscanf(conn, "HTTP/1.1 %d", &status); err != nil {
		t.Fatalf("%s: no answer to a slow body: %v", path, err)
	}
	return status
}
