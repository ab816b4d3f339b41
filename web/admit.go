package web

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Admission: a request needs several simulations (the run, its baselines, the remedies), so
// slots handed out per simulation let a burst of requests interleave until every one of them
// reaches its deadline and none finishes. A request instead takes one slot for all of its
// simulations, and at most Slots+Queue requests are admitted at once: past that the server
// answers 503 at once, with a Retry-After from the time requests have been taking, and
// everything it admits runs to its end.

// enter admits r and waits for its slot. It returns the release to defer, or ok false when r
// was refused (the answer is written) or went away while it waited.
func (s *Server) enter(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	select {
	case s.admit <- struct{}{}:
	default:
		w.Header().Set("Retry-After", strconv.Itoa(s.load.retryAfter(cap(s.admit), s.opts.Slots)))
		httpError(w, http.StatusServiceUnavailable, fmt.Sprintf("the server is busy: %d requests are running or waiting, its limit; try again in a few seconds", cap(s.admit)))
		return nil, false
	}
	select {
	case s.slots <- struct{}{}:
	case <-r.Context().Done():
		<-s.admit
		return nil, false
	}
	start := time.Now()
	return func() {
		s.load.observe(time.Since(start))
		<-s.slots
		<-s.admit
	}, true
}

// loadMeter keeps a moving mean of the time admitted requests take to simulate.
type loadMeter struct {
	mu   sync.Mutex
	mean time.Duration // exponentially weighted, 1/8 per request (TCP's SRTT weight, RFC 6298)
}

func (m *loadMeter) observe(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mean == 0 {
		m.mean = d
		return
	}
	m.mean += (d - m.mean) / 8
}

// retryAfter is the whole seconds until a full server has room: the admitted requests drain
// through slots at the mean request time. At least 1, at most 60.
func (m *loadMeter) retryAfter(admitted, slots int) int {
	m.mu.Lock()
	mean := m.mean
	m.mu.Unlock()
	secs := math.Ceil(mean.Seconds() * float64(admitted) / float64(max(slots, 1)))
	return int(min(max(secs, 1), 60))
}

// HTTPServer returns an http.Server for s with the timeouts a long-lived page server needs:
// headers within 5 s, the whole request body within 10 s (requests carry none), an answer within
// what the queue ahead of it can take, and idle keep-alive connections closed after a minute,
// so that connections a browser or a client leaves open do not use up file descriptors.
func (s *Server) HTTPServer() *http.Server {
	queued := (s.opts.Queue + s.opts.Slots) / max(s.opts.Slots, 1)
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      time.Duration(queued+1)*s.opts.Timeout + 10*time.Second,
		IdleTimeout:       time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
}
