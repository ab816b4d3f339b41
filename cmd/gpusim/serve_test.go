package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// startServe runs gpusim serve on a free loopback port and returns the page's URL.
func startServe(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, pw, io.Discard, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...))
		pw.Close()
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("gpusim serve returned %v after its context ended, want nil", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("gpusim serve did not stop when its context ended")
		}
	})
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("gpusim serve printed no address: %v", err)
	}
	go io.Copy(io.Discard, pr)
	_, after, ok := strings.Cut(line, "http://")
	if !ok {
		t.Fatalf("gpusim serve printed %q, want its URL", line)
	}
	u := "http://" + strings.Fields(after)[0]
	if !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Errorf("gpusim serve listens on %s, want loopback", u)
	}
	return strings.TrimSuffix(u, "/")
}

// TestServeErrorsReadAsRun checks that the page answers a bad override with 400 and the very
// message gpusim run prints for it.
func TestServeErrorsReadAsRun(t *testing.T) {
	base := startServe(t)
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "gpusim workshop") {
		t.Fatalf("GET / = %d %.200s", resp.StatusCode, page)
	}
	for _, tc := range []struct{ scenario, set string }{
		{"default", "batch=0"},
		{"default", "memory.mode=limit"},
		{"memory-limit", "memory.limit_mib=-1"},
		{"growth-and-limit", "memory.growth_after_limit=true"},
		{"default", "precision=fp8"},
	} {
		_, errs, code := runCLI(t, "run", tc.scenario, "--set", tc.set)
		if code != 2 {
			t.Fatalf("gpusim run %s --set %s: exit %d, want 2", tc.scenario, tc.set, code)
		}
		want := strings.TrimSpace(strings.TrimPrefix(errs, "gpusim: "))
		resp, err := http.Get(base + "/api/run?" + url.Values{"scenario": {tc.scenario}, "set": {tc.set}}.Encode())
		if err != nil {
			t.Fatal(err)
		}
		var e struct{ Error string }
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != 400 || e.Error != want {
			t.Errorf("page --set %s = %d %q, want 400 and gpusim run's %q", tc.set, resp.StatusCode, e.Error, want)
		}
	}
}

func TestServeUsage(t *testing.T) {
	for _, args := range [][]string{{"serve", "extra"}, {"serve", "--timeout", "0s"}, {"serve", "--addr", "nonsense"}, {"serve", "--bogus"}} {
		_, errs, code := runCLI(t, args...)
		if code != 2 || !strings.Contains(errs, "serve") {
			t.Errorf("gpusim %s: exit %d %q, want 2 naming serve", strings.Join(args, " "), code, errs)
		}
	}
	out, _, code := runCLI(t, "serve", "--help")
	if code != 0 || !strings.Contains(out, "gpusim serve [--addr 127.0.0.1:8080]") {
		t.Errorf("gpusim serve --help: exit %d %q", code, out)
	}
}
