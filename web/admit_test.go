package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// The server answers only requests that name it by localhost, an IP address or an allowed name
// (a DNS-rebinding page names its own domain), and its API only the page's own origin.
func TestHostAndOriginChecked(t *testing.T) {
	ts := newServer(t, Options{AllowedHosts: []string{"Classroom.LAN"}})
	_, port, _ := splitPort(ts.URL)
	for _, tc := range []struct {
		path, host string
		hdr        map[string]string
		want       int
	}{
		{"/", "attacker.example:" + port, nil, 403},
		{"/api/lessons", "attacker.example", nil, 403},
		{"/api/run", "127.0.0.1.nip.io:" + port, nil, 403},
		{"/", "localhost:" + port, nil, 200},
		{"/", "[::1]:" + port, nil, 200},
		{"/", "192.0.2.7:" + port, nil, 200},
		{"/", "classroom.lan:" + port, nil, 200},
		{"/api/lessons", "localhost:" + port, map[string]string{"Origin": "http://localhost:" + port}, 200},
		{"/api/lessons", "localhost:" + port, map[string]string{"Origin": "http://evil.example"}, 403},
		{"/api/lessons", "localhost:" + port, map[string]string{"Origin": "null"}, 403},
		{"/api/lessons", "localhost:" + port, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"/api/lessons", "localhost:" + port, map[string]string{"Sec-Fetch-Site": "same-origin"}, 200},
	} {
		req, err := http.NewRequest("GET", ts.URL+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = tc.host
		for k, v := range tc.hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("GET %s Host %q %v = %d, want %d", tc.path, tc.host, tc.hdr, resp.StatusCode, tc.want)
		}
	}
}

func splitPort(u string) (string, string, error) {
	i := len(u) - 1
	for i >= 0 && u[i] != ':' {
		i--
	}
	return u[:i], u[i+1:], nil
}

// A full server refuses at once, with Retry-After, and what it admitted still finishes; a
// request that goes away gives its slot back.
func TestBusyServerRefusesAtOnce(t *testing.T) {
	s, err := New(Options{Slots: 1, Queue: -1, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	long, err := http.NewRequestWithContext(ctx, "GET", runURL(ts.URL, "input-bound", "steps=20000"), nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		if resp, err := http.DefaultClient.Do(long); err == nil {
			resp.Body.Close()
		}
	}()
	for deadline := time.Now().Add(10 * time.Second); len(s.slots) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the long request was never admitted")
		}
	}
	resp, err := http.Get(runURL(ts.URL, "default"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); resp.StatusCode != 503 || err != nil || ra < 1 {
		t.Errorf("GET while full = %d Retry-After %q, want 503 with a positive Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	cancel()
	for deadline := time.Now().Add(10 * time.Second); len(s.admit) > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the cancelled request kept its slot")
		}
	}
	if code, body := get(t, runURL(ts.URL, "default")); code != 200 {
		t.Errorf("GET after the cancel = %d %s, want 200", code, body)
	}
}

// TestBoundedLoad sends 200 concurrent requests on loopback, each retrying after a 503 as its
// Retry-After says: every request ends in a 200 (none fails on a deadline), the first answers
// come fast (a refusal is immediate), and the heap stays bounded. It logs p50/p99 and memory.
func TestBoundedLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("200 requests")
	}
	s, err := New(Options{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(s)
	srv.Config = s.HTTPServer()
	srv.Start()
	t.Cleanup(srv.Close)
	const n = 200
	var (
		mu           sync.Mutex
		first, total []time.Duration
		refused      int
		peakHeap     uint64
	)
	stop := make(chan struct{})
	go func() { // sample the heap while the load runs
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			mu.Lock()
			peakHeap = max(peakHeap, m.HeapInuse)
			mu.Unlock()
		}
	}()
	client := &http.Client{Timeout: 60 * time.Second}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A distinct configuration per request: nothing is answered from a cache.
			u := runURL(srv.URL, "default", fmt.Sprintf("seed=%d", i+1), fmt.Sprintf("batch=%d", 32+i), "steps=20")
			start := time.Now()
			for try := 0; time.Since(start) < 2*time.Minute; try++ {
				resp, err := client.Get(u)
				if err != nil {
					t.Errorf("request %d: %v", i, err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mu.Lock()
				if try == 0 {
					first = append(first, time.Since(start))
				}
				mu.Unlock()
				switch resp.StatusCode {
				case 200:
					mu.Lock()
					total = append(total, time.Since(start))
					mu.Unlock()
					return
				case 503:
					ra, err := strconv.Atoi(resp.Header.Get("Retry-After"))
					if err != nil || ra < 1 {
						t.Errorf("request %d: 503 with Retry-After %q", i, resp.Header.Get("Retry-After"))
						return
					}
					mu.Lock()
					refused++
					mu.Unlock()
					// Retry-After counts whole seconds; a tenth of it keeps the test short and
					// still waits longer under a longer queue.
					time.Sleep(time.Duration(ra) * 100 * time.Millisecond)
				default:
					t.Errorf("request %d: status %d", i, resp.StatusCode)
					return
				}
			}
			t.Errorf("request %d: still refused after 2 minutes", i)
		}()
	}
	wg.Wait()
	close(stop)
	if len(total) != n {
		t.Fatalf("%d of %d requests finished", len(total), n)
	}
	slices.Sort(first)
	slices.Sort(total)
	q := func(d []time.Duration, p float64) time.Duration { return d[int(p*float64(len(d)-1))] }
	t.Logf("%d requests, %d slots, queue %d: first answer p50 %v p99 %v; done p50 %v p99 %v; %d refusals (503) on the way; peak heap in use %.0f MiB",
		n, s.opts.Slots, s.opts.Queue, q(first, .5), q(first, .99), q(total, .5), q(total, .99), refused, float64(peakHeap)/(1<<20))
}
