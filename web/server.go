package web

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"runtime"
	"strings"
	"time"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/internal/suggest"
	"github.com/gpusim/gpusim/report"
	"github.com/gpusim/gpusim/scenarios"
	"github.com/gpusim/gpusim/train"
)

//go:embed assets
var assetFS embed.FS

// Options are the server's limits.
type Options struct {
	// Timeout bounds the simulations of one request: the run and the remedies it
	// re-simulates. A request past it gets 503 and its message.
	Timeout time.Duration
	// Slots is how many requests simulate at once, each its simulations one after another. A
	// request waits for a free slot or for its own end (a stale request the page cancelled
	// never starts), and a running simulation stops when its request ends (train.Run watches
	// its context).
	Slots int
	// Queue is how many more requests may wait for a slot (negative: none). A request past
	// Slots+Queue is refused at once with 503 and Retry-After; one that is admitted runs to its
	// end (or its Timeout), so a burst slows the page down instead of failing every request.
	Queue int
	// MaxSets caps the overrides of one request.
	MaxSets int
	// AllowedHosts are host names, beyond localhost and IP addresses, that requests may name in
	// their Host header (the name of a machine serving a class, say). Any other name is refused:
	// a web page that rebinds its own domain to this machine's address (DNS rebinding) reaches
	// the server only under its own name, never under one of these.
	AllowedHosts []string
}

// DefaultOptions allows 10 s per request (the slowest built-in with its remedies takes about
// a second on one core) and one simulation per CPU.
func DefaultOptions() Options {
	n := runtime.GOMAXPROCS(0)
	return Options{Timeout: 10 * time.Second, Slots: n, Queue: 4 * n, MaxSets: 64}
}

// Server is the workshop page: its embedded assets and the simulation API. It is an
// http.Handler.
type Server struct {
	opts    Options
	admit   chan struct{} // Slots+Queue: the requests admitted, running or waiting
	slots   chan struct{} // Slots: the requests simulating
	hosts   map[string]bool
	load    loadMeter
	assets  map[string][]byte // URL path -> file, from the embedded assets only
	lessons []byte            // GET /api/lessons, computed once
}

var _ http.Handler = (*Server)(nil)

// New returns a Server with options o (zero fields take DefaultOptions' values).
func New(o Options) (*Server, error) {
	d := DefaultOptions()
	if o.Timeout <= 0 {
		o.Timeout = d.Timeout
	}
	if o.Slots <= 0 {
		o.Slots = d.Slots
	}
	switch {
	case o.Queue == 0:
		o.Queue = d.Queue
	case o.Queue < 0:
		o.Queue = 0
	}
	if o.MaxSets <= 0 {
		o.MaxSets = d.MaxSets
	}
	s := &Server{opts: o, admit: make(chan struct{}, o.Slots+o.Queue), slots: make(chan struct{}, o.Slots),
		hosts: map[string]bool{"localhost": true}, assets: map[string][]byte{}}
	for _, h := range o.AllowedHosts {
		s.hosts[strings.ToLower(strings.TrimSuffix(h, "."))] = true
	}
	err := fs.WalkDir(assetFS, "assets", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := assetFS.ReadFile(p)
		if err != nil {
			return err
		}
		s.assets["/"+strings.TrimPrefix(p, "assets/")] = data
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("web: embedded assets: %w", err)
	}
	s.assets["/"] = s.assets["/index.html"]
	ls, err := allLessons()
	if err != nil {
		return nil, fmt.Errorf("web: lessons: %w", err)
	}
	s.lessons, err = json.Marshal(map[string]any{"lessons": ls, "controls": controls()})
	if err != nil {
		return nil, fmt.Errorf("web: lessons: %w", err)
	}
	return s, nil
}

// ServeHTTP serves GET / and the embedded assets, GET /api/lessons, GET /api/run and GET
// /api/plan.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// Nothing is loaded from anywhere but this server: the page works without a network.
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	if msg := s.checkOrigin(r); msg != "" {
		httpError(w, http.StatusForbidden, msg)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		httpError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed: the page only reads", r.Method))
		return
	}
	switch r.URL.Path {
	case "/api/lessons":
		h.Set("Content-Type", "application/json")
		w.Write(s.lessons)
		return
	case "/api/run":
		s.serveRun(w, r)
		return
	case "/api/plan":
		s.servePlan(w, r)
		return
	}
	data, ok := s.assets[r.URL.Path]
	if !ok {
		httpError(w, http.StatusNotFound, fmt.Sprintf("%s: not found", r.URL.Path))
		return
	}
	ct := mime.TypeByExtension(path.Ext(r.URL.Path))
	if r.URL.Path == "/" {
		ct = "text/html; charset=utf-8"
	}
	h.Set("Content-Type", ct)
	w.Write(data)
}

// runResponse is GET /api/run's answer: the run as gpusim run -o json prints it, and the
// same run as a command, a YAML file and the TF program it stands for.
type runResponse struct {
	Scenario string   `json:"scenario"`
	Sets     []string `json:"sets"`
	// Command is the gpusim run command line that gives the same result.
	Command string `json:"command"`
	// YAML is the scenario file with the overrides written in.
	YAML string `json:"yaml"`
	// TFCode is the TensorFlow program the configuration stands for.
	TFCode string `json:"tf_code"`
	// Settings are the controls' values in the effective configuration.
	Settings map[string]string `json:"settings"`
	Result   report.ResultJSON `json:"result"`
	// The figures the page draws beyond gpusim run -o json (page.go).
	pageData
}

// builtinOnly holds the keys whose @FILE values the page refuses (scenarios.FileRefs): what it
// runs instead, and what the file would have been.
var builtinOnly = map[string][2]string{
	"hardware.gpu":          {"built-in GPU profiles only (gpusim list devices)", "profile"},
	"hardware.host.profile": {"built-in host profiles only (gpusim list hosts)", "profile"},
	"model":                 {"zoo models only (gpusim list models)", "model"},
}

// serveRun runs GET /api/run?scenario=NAME&set=key=value&set=...: the built-in NAME with the
// overrides, checked as gpusim run checks them.
func (s *Server) serveRun(w http.ResponseWriter, r *http.Request) {
	// url.Values from r.URL.Query() would drop a malformed pair ("scenario=%ZZ") and run the
	// default scenario instead.
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		httpError(w, http.StatusBadRequest, fmt.Sprintf("malformed query: %v", err))
		return
	}
	for k := range q {
		if k != "scenario" && k != "set" {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("unknown parameter %q: want scenario and set", k))
			return
		}
	}
	name := q.Get("scenario")
	if name == "" {
		name = "default"
	}
	sets := q["set"]
	if len(sets) > s.opts.MaxSets {
		httpError(w, http.StatusBadRequest, fmt.Sprintf("%d overrides: at most %d", len(sets), s.opts.MaxSets))
		return
	}
	release, ok := s.enter(w, r)
	if !ok {
		return
	}
	defer release()
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.Timeout)
	defer cancel()
	resp, err := s.run(ctx, name, sets)
	switch {
	case err == nil:
	case errors.Is(err, context.DeadlineExceeded) && r.Context().Err() == nil:
		httpError(w, http.StatusServiceUnavailable, fmt.Sprintf("the simulation took longer than the server's limit of %s per request (gpusim serve --timeout)", s.opts.Timeout))
		return
	case r.Context().Err() != nil:
		return // the page cancelled the request: nobody reads an answer
	case errors.As(err, new(badRequest)):
		httpError(w, http.StatusBadRequest, err.Error())
		return
	default:
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	if err := enc.Encode(resp); err != nil {
		return // the client went away
	}
}

// badRequest is an error in what the request asked for: the scenario checks' message.
type badRequest struct{ error }

func (e badRequest) Unwrap() error { return e.error }

// run resolves and checks the scenario as gpusim run does, runs it (and, for an input-bound
// run, the remedies) within ctx and builds the answer.
func (s *Server) run(ctx context.Context, name string, sets []string) (*runResponse, error) {
	if !isBuiltin(name) {
		return nil, badRequest{fmt.Errorf("unknown scenario %q (%s)", name, suggest.Hint(name, scenarios.Names(), "gpusim list scenarios"))}
	}
	sc, err := scenario(name, sets)
	if err != nil {
		return nil, badRequest{explainFileRef(err)}
	}
	// One session per request: the run, its baselines (one GPU, float32) and the remedies
	// share simulations, each in a slot and within the request's deadline.
	sess := analysis.NewSession(s.simulate)
	res, err := sess.Run(ctx, sc.Config)
	if err != nil {
		if se, ok := sc.RunError(err); ok {
			// TF rejects the configuration: named as gpusim run names it.
			return nil, badRequest{se}
		}
		return nil, err
	}
	// An input-bound run re-simulates each tf.data change that may help, as gpusim run does.
	if err := sc.Remedies(ctx, sess, res); err != nil {
		return nil, fmt.Errorf("diagnosis: %w", err)
	}
	src, err := scenarios.BuiltinYAML(name)
	if err != nil {
		return nil, err
	}
	y, err := scenarios.WithSets("builtin:"+name, src, sets)
	if err != nil {
		return nil, badRequest{err}
	}
	out := &runResponse{Scenario: name, Sets: sets, Command: command(name, sets), YAML: string(y),
		TFCode: report.TFCode(&sc.Config), Settings: settings(&sc.Config), Result: report.NewResultJSON(res)}
	if out.Sets == nil {
		out.Sets = []string{}
	}
	out.pageData = newPageData(&sc.Config, res.Result)
	return out, nil
}

// scenario is the built-in name with the overrides, checked (scenarios' --set path). The page
// reads no file of the serving machine: a value that names one (however the YAML spells it) is
// refused as parsed, before anything opens it (Scenario.NoFiles).
func scenario(name string, sets []string) (*scenarios.Scenario, error) {
	sc, err := scenarios.Builtin(name)
	if err != nil {
		return nil, err
	}
	sc.NoFiles = true
	if err := sc.SetAll(sets); err != nil {
		return nil, err
	}
	return sc, nil
}

// explainFileRef rewords a scenarios.ErrFileRef refusal as the page's rule: what it runs instead
// of a file, and that gpusim run reads such files. Other errors are returned as they are.
func explainFileRef(err error) error {
	var se *scenarios.Error
	if !errors.Is(err, scenarios.ErrFileRef) || !errors.As(err, &se) {
		return err
	}
	only, ok := builtinOnly[se.Field]
	if !ok {
		only = [2]string{"built-in names only", "file"}
	}
	return fmt.Errorf("%s: %s: the page runs %s; a %s file needs gpusim run", se.Place, se.Field, only[0], only[1])
}

// simulate runs cfg (an analysis.RunFunc) within the request's slot (enter): the request's
// simulations run one after another, and end with ctx, so a request the page abandoned or one
// past its deadline stops simulating.
func (s *Server) simulate(ctx context.Context, cfg train.Config) (*train.Result, error) {
	return train.Run(ctx, cfg)
}

func isBuiltin(name string) bool {
	for _, n := range scenarios.Names() {
		if n == name {
			return true
		}
	}
	return false
}

// command is the gpusim run command line of a built-in with overrides, quoted for a POSIX
// shell.
func command(name string, sets []string) string {
	parts := []string{"gpusim", "run", name}
	for _, kv := range sets {
		parts = append(parts, "--set", shellQuote(kv))
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.,:/=+@%", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// httpError answers with status and a JSON {"error": msg}; the page shows msg as it is.
func httpError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
