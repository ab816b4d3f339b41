package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/report"
)

func planURL(base string, q url.Values) string { return base + "/api/plan?" + q.Encode() }

func getPlan(t *testing.T, u string) planResponse {
	t.Helper()
	code, body := get(t, u)
	if code != http.StatusOK {
		t.Fatalf("GET %s = %d %s", u, code, body)
	}
	var r planResponse
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPlanIsTheSearch: the plan panel's answer is analysis.Plan over the small space around the
// page's scenario with its overrides (the plans, ranks, figures, intervals and diagnoses, as
// JSON), each plan with its --set lines and TF code; the command names that search, and the
// top plan is at least as good as the scenario as it is.
func TestPlanIsTheSearch(t *testing.T) {
	ts := newServer(t, Options{})
	r := getPlan(t, planURL(ts.URL, url.Values{"scenario": {"input-bound"}, "set": {"batch=128"}, "goal": {"throughput"}}))
	want := "gpusim plan input-bound --set batch=128 --goal throughput --space small"
	if r.Command != want {
		t.Errorf("command %q, want %q", r.Command, want)
	}
	sc := mustScenario(t, "input-bound", "batch=128")
	rep, err := analysis.Plan(context.Background(), sc.Config, analysis.PlanOptions{Goal: analysis.GoalThroughput,
		Space: analysis.SmallPlanSpace(sc.Config, analysis.GoalThroughput), Margin: 0.1, MaxNodes: 1, Top: 5, Steps: 20, Jobs: 2,
		Training: analysis.Training{DatasetSize: 1_000_000, Epochs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Plans) != len(rep.Plans) || len(r.Plans) == 0 {
		t.Fatalf("%d plans, the search has %d", len(r.Plans), len(rep.Plans))
	}
	js := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for i, p := range r.Plans {
		if got, want := js(p.PlanResult), js(rep.Plans[i]); got != want {
			t.Errorf("plan %d:\n%s\nthe search's:\n%s", i+1, got, want)
		}
		if code := report.TFCode(&rep.Plans[i].Config); p.TFCode != code {
			t.Errorf("plan %d: TF code differs from report.TFCode's", i+1)
		}
		if len(p.Set) != len(p.Changes) {
			t.Errorf("plan %d: %d --set lines for %d changes", i+1, len(p.Set), len(p.Changes))
		}
	}
	if js(r.Current.PlanResult) != js(rep.Current) || r.Space != rep.Space || r.Simulated != rep.Simulated {
		t.Errorf("current or counts differ from the search's")
	}
	top := r.Plans[0]
	if top.Throughput < r.Current.Throughput || top.Bound == "" || top.Why == "" || top.ThroughputInterval == nil {
		t.Errorf("top plan %.0f samples/s (now %.0f), diagnosis %q: %q, interval %v", top.Throughput, r.Current.Throughput, top.Bound, top.Why, top.ThroughputInterval)
	}
	// input-bound is starved by its tf.data pipeline: the top plan tunes it.
	if !strings.Contains(strings.Join(top.Set, " "), "autotune") || !strings.Contains(top.TFCode, "tf.data.AUTOTUNE") {
		t.Errorf("top plan of input-bound: %v\n%s", top.Set, top.TFCode)
	}
}

// TestPlanCost: the cost goal prices the scenario's GPU at the page's $/GPU-hour, for the
// dataset and epochs asked, and names the price file its command reads.
func TestPlanCost(t *testing.T) {
	ts := newServer(t, Options{})
	r := getPlan(t, planURL(ts.URL, url.Values{"scenario": {"resnet50-a100"}, "goal": {"cost"}, "price": {"2.5"},
		"dataset_size": {"50000"}, "epochs": {"3"}}))
	if want := "gpusim plan resnet50-a100 --goal cost --space small --dataset-size 50000 --epochs 3 --prices prices.yaml"; r.Command != want {
		t.Errorf("command %q, want %q", r.Command, want)
	}
	if r.PricesYAML != "prices:\n  a100-40gb: 2.5\n" {
		t.Errorf("prices file %q", r.PricesYAML)
	}
	if r.Training.DatasetSize != 50000 || r.Training.Epochs != 3 {
		t.Errorf("training %+v, want 3 epochs of 50000", r.Training)
	}
	for i, p := range r.Plans {
		hours := float64(p.Knobs.GPUs) * p.TrainSeconds / 3600
		if p.PricePerGPUHour != 2.5 || p.Dollars <= 0 || p.Dollars-hours*2.5 > 1e-9*p.Dollars || hours*2.5-p.Dollars > 1e-9*p.Dollars {
			t.Errorf("plan %d: $%v for %v GPU-hours at $%v/h", i+1, p.Dollars, hours, p.PricePerGPUHour)
		}
		if i > 0 && p.Dollars < r.Plans[i-1].Dollars {
			t.Errorf("plan %d costs less than plan %d", i+1, i)
		}
	}
}

// TestPlanBadRequests: each bad plan request is a 400 that says what is wrong, before any
// simulation; a file the overrides name is refused as /api/run refuses it.
func TestPlanBadRequests(t *testing.T) {
	ts := newServer(t, Options{})
	for _, tc := range []struct {
		q    string
		want string
	}{
		{"scenario=default&goal=fastest", `goal "fastest": want throughput, time-to-train, cost or max-batch`},
		{"scenario=default&goal=cost", "goal cost needs price: the scenario's GPU's $/GPU-hour"},
		{"scenario=default&goal=cost&price=-1", `price "-1": want a positive number of $/GPU-hour`},
		{"scenario=default&goal=cost&price=NaN", `price "NaN": want a positive number of $/GPU-hour`},
		{"scenario=default&goal=time-to-train&epochs=0", `epochs "0": want a whole number from 1 to 1048576`},
		{"scenario=default&dataset_size=lots", `dataset_size "lots": want a whole number from 1 to 1099511627776`},
		{"scenario=default&top=3", `unknown parameter "top": want scenario, set, goal, price, dataset_size, epochs`},
		{"scenario=default&goal=cost&goal=throughput", `parameter "goal" given 2 times`},
		{"scenario=%ZZ", `malformed query: invalid URL escape "%ZZ"`},
		{"scenario=../go.mod", `unknown scenario "../go.mod"`},
		{"scenario=default&set=hardware.gpu%3D%40%2Fetc%2Fhostname",
			"--set hardware.gpu=@/etc/hostname: hardware.gpu: the page runs built-in GPU profiles only (gpusim list devices); a profile file needs gpusim run"},
		{"scenario=default&set=batch%3D0", "--set batch=0: batch:"},
	} {
		code, body := get(t, ts.URL+"/api/plan?"+tc.q)
		var e struct{ Error string }
		if err := json.Unmarshal(body, &e); err != nil {
			t.Errorf("%s: body %q is not JSON: %v", tc.q, body, err)
			continue
		}
		if code != 400 || !strings.HasPrefix(e.Error, tc.want) {
			t.Errorf("GET /api/plan?%s = %d %q, want 400 %q", tc.q, code, e.Error, tc.want)
		}
	}
}

// TestPlanAdmittedAndChecked: the plan endpoint is behind the same Host and Origin checks and
// the same admission as /api/run: another site's request is refused, a full server answers 503
// at once, and a search past the server's limit is a 503 that names the command to run it.
func TestPlanAdmittedAndChecked(t *testing.T) {
	ts := newServer(t, Options{})
	for _, hdr := range []map[string]string{{"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}} {
		req, _ := http.NewRequest("GET", ts.URL+"/api/plan?scenario=default", nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Errorf("GET /api/plan with %v = %d, want 403", hdr, resp.StatusCode)
		}
	}

	s, err := New(Options{Slots: 1, Queue: -1, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	full := httptest.NewServer(s)
	t.Cleanup(full.Close)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	long, _ := http.NewRequestWithContext(ctx, "GET", runURL(full.URL, "input-bound", "steps=20000"), nil)
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
	resp, err := http.Get(full.URL + "/api/plan?scenario=default")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("GET /api/plan while full = %d Retry-After %q, want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	cancel()

	slow := newServer(t, Options{Timeout: 50 * time.Millisecond})
	code, body := get(t, slow.URL+"/api/plan?scenario=input-bound&goal=max-batch")
	if code != 503 || !strings.Contains(string(body), "the search took longer than the server's limit of 50ms") ||
		!strings.Contains(string(body), "gpusim plan input-bound --goal max-batch --space small runs it without one") {
		t.Errorf("GET a search past the limit = %d %s", code, body)
	}
}
