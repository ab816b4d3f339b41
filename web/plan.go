package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/internal/suggest"
	"github.com/gpusim/gpusim/report"
	"github.com/gpusim/gpusim/scenarios"
)

// The plan panel: GET /api/plan searches analysis.SmallPlanSpace around the page's scenario
// for a goal, as gpusim plan NAME --space small does. The small space (about 80 points, 320
// with an input pipeline: the scenario's GPU, count and strategy kept) is what bounds a
// search's time and memory here; the request's slot and Options.Timeout bound it as they bound
// a run, and its simulations run one after another in that slot (Jobs 1).

// Plan search settings the page does not offer: gpusim plan's defaults.
const (
	planTop    = 5
	planSteps  = 20
	planMargin = 0.1
	// planMaxDataset and planMaxEpochs bound the training job the time to train is for: far
	// above any real one (ImageNet is 1.28M samples), low enough that the seconds stay finite.
	planMaxDataset = 1 << 40
	planMaxEpochs  = 1 << 20
)

// planResponse is GET /api/plan's answer: the report as gpusim plan -o json prints it (the
// counts, current and the ranked plans with their figures, intervals, diagnosis, --set lines
// and TF code) and the command that prints it.
type planResponse struct {
	Scenario string   `json:"scenario"`
	Sets     []string `json:"sets"`
	// Command is the gpusim plan command line that searches the same space; with a price,
	// PricesYAML is the --prices file it names (prices.yaml).
	Command    string `json:"command"`
	PricesYAML string `json:"prices_yaml,omitempty"`
	*analysis.PlanReport
	Current  planEntry   `json:"current"`
	Plans    []planEntry `json:"plans"`
	Interval string      `json:"interval_note"`
}

// planEntry is one plan with its change as --set lines and the TF/Keras code to write.
type planEntry struct {
	analysis.PlanResult
	Set    []string `json:"set"`
	TFCode string   `json:"tf_code"`
}

// planIntervalNote says where the intervals come from, as gpusim plan says it.
const planIntervalNote = "80% prediction intervals from the validation residuals of runs like each plan (gpusim validate); \"no interval yet\" where none answers"

// planQuery is what a plan request asks for.
type planQuery struct {
	name, goal     string
	sets           []string
	price          float64 // $/GPU-hour of the scenario's GPU; 0: none
	dataset, epoch int
}

// parsePlanQuery reads GET /api/plan?scenario=NAME&set=k=v&goal=G&price=P&dataset_size=N&epochs=E.
func (s *Server) parsePlanQuery(raw string) (planQuery, error) {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return planQuery{}, fmt.Errorf("malformed query: %v", err)
	}
	known := []string{"scenario", "set", "goal", "price", "dataset_size", "epochs"}
	for k, v := range q {
		if !slices.Contains(known, k) {
			return planQuery{}, fmt.Errorf("unknown parameter %q: want %s", k, strings.Join(known, ", "))
		}
		if k != "set" && len(v) > 1 {
			return planQuery{}, fmt.Errorf("parameter %q given %d times", k, len(v))
		}
	}
	p := planQuery{name: q.Get("scenario"), goal: q.Get("goal"), sets: q["set"], dataset: 1_000_000, epoch: 1}
	if p.name == "" {
		p.name = "default"
	}
	if p.goal == "" {
		p.goal = string(analysis.GoalThroughput)
	}
	if !slices.Contains(analysis.Goals, analysis.Goal(p.goal)) {
		return p, fmt.Errorf("goal %q: want throughput, time-to-train, cost or max-batch", p.goal)
	}
	if len(p.sets) > s.opts.MaxSets {
		return p, fmt.Errorf("%d overrides: at most %d", len(p.sets), s.opts.MaxSets)
	}
	if v := q.Get("price"); v != "" {
		if p.price, err = strconv.ParseFloat(v, 64); err != nil || !(p.price > 0) || math.IsInf(p.price, 0) {
			return p, fmt.Errorf("price %q: want a positive number of $/GPU-hour", v)
		}
	}
	if p.goal == string(analysis.GoalCost) && p.price == 0 {
		return p, errors.New("goal cost needs price: the scenario's GPU's $/GPU-hour")
	}
	for _, x := range []struct {
		key string
		to  *int
		max int
	}{{"dataset_size", &p.dataset, planMaxDataset}, {"epochs", &p.epoch, planMaxEpochs}} {
		if v := q.Get(x.key); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > x.max {
				return p, fmt.Errorf("%s %q: want a whole number from 1 to %d", x.key, v, x.max)
			}
			*x.to = n
		}
	}
	return p, nil
}

// servePlan answers GET /api/plan: admitted, in a slot and within the timeout as a run is.
func (s *Server) servePlan(w http.ResponseWriter, r *http.Request) {
	pq, err := s.parsePlanQuery(r.URL.RawQuery)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	release, ok := s.enter(w, r)
	if !ok {
		return
	}
	defer release()
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.Timeout)
	defer cancel()
	resp, err := s.plan(ctx, pq)
	switch {
	case err == nil:
	case errors.Is(err, context.DeadlineExceeded) && r.Context().Err() == nil:
		httpError(w, http.StatusServiceUnavailable, fmt.Sprintf("the search took longer than the server's limit of %s per request (gpusim serve --timeout); %s runs it without one", s.opts.Timeout, planCommand(pq)))
		return
	case r.Context().Err() != nil:
		return
	case errors.As(err, new(badRequest)):
		httpError(w, http.StatusBadRequest, err.Error())
		return
	default:
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, resp)
}

// plan searches the small space around the built-in with the overrides for the goal.
func (s *Server) plan(ctx context.Context, pq planQuery) (*planResponse, error) {
	if !isBuiltin(pq.name) {
		return nil, badRequest{fmt.Errorf("unknown scenario %q (%s)", pq.name, suggest.Hint(pq.name, scenarios.Names(), "gpusim list scenarios"))}
	}
	sc, err := scenario(pq.name, pq.sets)
	if err != nil {
		return nil, badRequest{explainFileRef(err)}
	}
	goal := analysis.Goal(pq.goal)
	o := analysis.PlanOptions{Goal: goal, Space: analysis.SmallPlanSpace(sc.Config, goal), Margin: planMargin,
		MaxNodes: sc.Config.NodeCount(), Top: planTop, Steps: planSteps, Jobs: 1, Run: s.simulate,
		Training: analysis.Training{DatasetSize: pq.dataset, Epochs: pq.epoch}}
	if pq.price > 0 {
		o.Prices = map[string]float64{sc.Config.GPU: pq.price}
	}
	rep, err := analysis.Plan(ctx, sc.Config, o)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if se, ok := sc.RunError(err); ok {
			return nil, badRequest{se}
		}
		return nil, err
	}
	out := &planResponse{Scenario: pq.name, Sets: pq.sets, Command: planCommand(pq), PlanReport: rep,
		Current: newPlanEntry(*rep.Current), Plans: []planEntry{}, Interval: planIntervalNote}
	if out.Sets == nil {
		out.Sets = []string{}
	}
	if pq.price > 0 {
		out.PricesYAML = fmt.Sprintf("prices:\n  %s: %s\n", sc.Config.GPU, strconv.FormatFloat(pq.price, 'f', -1, 64))
	}
	for _, p := range rep.Plans {
		out.Plans = append(out.Plans, newPlanEntry(p))
	}
	return out, nil
}

func newPlanEntry(p analysis.PlanResult) planEntry {
	// Set is a list in the JSON even when the plan changes nothing.
	return planEntry{PlanResult: p, Set: append([]string{}, scenarios.SetLines(p.Changes)...), TFCode: report.TFCode(&p.Config)}
}

// planCommand is the gpusim plan command line that searches what the page searched.
func planCommand(pq planQuery) string {
	parts := []string{"gpusim", "plan", pq.name}
	for _, kv := range pq.sets {
		parts = append(parts, "--set", shellQuote(kv))
	}
	parts = append(parts, "--goal", pq.goal, "--space", "small")
	if pq.goal == string(analysis.GoalTimeToTrain) || pq.goal == string(analysis.GoalCost) || pq.dataset != 1_000_000 || pq.epoch != 1 {
		parts = append(parts, "--dataset-size", strconv.Itoa(pq.dataset), "--epochs", strconv.Itoa(pq.epoch))
	}
	if pq.price > 0 {
		parts = append(parts, "--prices", "prices.yaml")
	}
	return strings.Join(parts, " ")
}

// writeJSON answers 200 with v as JSON.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v) // an error is a client that went away
}
