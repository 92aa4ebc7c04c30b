//go:build unix

// authserver_conformance_test.go runs the official conformance suite's
// authorization server scenarios (0.2.0-alpha.12) against the built-in
// authorization server of a real `mcpgate serve`: its metadata, and the
// authorization code grant, with the sign-in the suite asks a person to
// do in a browser done by the test reading the page and posting its form.

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/peers"
	"github.com/mcpgate/mcpgate/internal/testkit"
)

func TestConformanceAuthorizationServerScenarios(t *testing.T) {
	p := peers.Require(t)
	bin := testkit.Mcpgate(t)
	b := startBuiltinServe(t, bin, "viewer")
	base, resource, secret, srv := "http://"+b.addr, "http://"+b.addr+"/mcp", b.secret, b.srv

	// The suite's callback listens on this port; the client is
	// registered with it, as the suite asks.
	port := strings.TrimPrefix(testkit.FreePort(t), "127.0.0.1:")
	callback := "http://127.0.0.1:" + port + "/callback"
	resp, err := http.Post(base+"/oauth/register", "application/json",
		strings.NewReader(`{"client_name":"conformance","redirect_uris":["`+callback+`"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		ClientID string `json:"client_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&reg); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("register: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()

	results := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Node22, p.ConformanceNext, "authorization", "--url", base, "--client-id", reg.ClientID,
		"--resource", resource, "--port", port, "-o", results)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	log := &testkit.Output{}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	authorizeURL := regexp.MustCompile(`^` + regexp.QuoteMeta(base+"/oauth/authorize?") + `\S+$`)
	signedIn := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		done := false
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			fmt.Fprintln(log, line)
			if !done && authorizeURL.MatchString(line) {
				done = true
				signedIn <- signInAsAPerson(line, secret)
			}
		}
		if !done {
			signedIn <- fmt.Errorf("the suite printed no authorization URL")
		}
	}()
	if err := <-signedIn; err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("sign-in: %v\nsuite:\n%s", err, log)
	}
	_ = cmd.Wait() // judged from checks.json
	files, _ := filepath.Glob(filepath.Join(results, "*", "checks.json"))
	passed, failed := 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var checks []struct{ ID, Status, ErrorMessage string }
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, c := range checks {
			switch c.Status {
			case "SUCCESS":
				passed++
			case "FAILURE", "WARNING":
				failed++
				t.Errorf("%s: %s %s", c.ID, c.Status, c.ErrorMessage)
			}
		}
	}
	peers.Score(t, "0.2.0-alpha.12 authorization: the built-in authorization server of serve: %d passed, %d failed", passed, failed)
	if passed < 3 {
		t.Errorf("%d checks passed in %d scenario files, want the metadata, its CIMD check and the code grant\nsuite:\n%s", passed, len(files), log)
	}
	srv.stop(t)
}

// signInAsAPerson opens the authorization URL, posts the sign-in page's
// form with the service token and follows the redirect to the client's
// callback, as a browser would.
func signInAsAPerson(authorize, secret string) error {
	resp, err := http.Get(authorize)
	if err != nil {
		return err
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the page: %d %s", resp.StatusCode, page)
	}
	form := url.Values{"token": {secret}, "decision": {"allow"}}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([^"]*)" value="([^"]*)">`).FindAllStringSubmatch(string(page), -1) {
		form.Set(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	u, _ := url.Parse(authorize)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodPost, u.Scheme+"://"+u.Host+u.Path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", u.Scheme+"://"+u.Host)
	resp, err = noFollow.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		return fmt.Errorf("the form: %d", resp.StatusCode)
	}
	// The suite prints the URL as it starts its callback server: the
	// callback is tried until that server listens.
	callback := resp.Header.Get("Location")
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err = http.Get(callback)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}
