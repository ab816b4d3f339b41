package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestServePlanIsTheCLIs: the workshop page's plan panel prints a gpusim plan command, and that
// command prints the panel's plans: the same points, scores, figures, intervals, diagnoses and
// TF code, for the throughput goal on input-bound with an override and for the cost goal with
// the price file the panel gives.
func TestServePlanIsTheCLIs(t *testing.T) {
	base := startServe(t)
	type plans struct {
		Plans []struct {
			Point      int         `json:"point"`
			Score      float64     `json:"score"`
			Throughput float64     `json:"throughput_samples_per_s"`
			Interval   *[2]float64 `json:"throughput_samples_per_s_interval"`
			Dollars    float64     `json:"dollars"`
			Bound      string      `json:"bound"`
			Why        string      `json:"why"`
			TFCode     string      `json:"tf_code"`
		} `json:"plans"`
		Command    string `json:"command"`
		PricesYAML string `json:"prices_yaml"`
	}
	dir := t.TempDir()
	for _, q := range []url.Values{
		{"scenario": {"input-bound"}, "set": {"batch=96"}, "goal": {"throughput"}},
		{"scenario": {"resnet50-a100"}, "goal": {"cost"}, "price": {"3"}, "dataset_size": {"200000"}},
	} {
		resp, err := http.Get(base + "/api/plan?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var page plans
		if resp.StatusCode != 200 || json.Unmarshal(body, &page) != nil || len(page.Plans) == 0 {
			t.Fatalf("GET /api/plan?%s = %d %s", q.Encode(), resp.StatusCode, body)
		}
		args := strings.Fields(page.Command)[1:]
		if page.PricesYAML != "" {
			prices := filepath.Join(dir, "prices.yaml")
			if err := os.WriteFile(prices, []byte(page.PricesYAML), 0o644); err != nil {
				t.Fatal(err)
			}
			for i, a := range args {
				if a == "prices.yaml" {
					args[i] = prices
				}
			}
		}
		out, errs, code := runCLI(t, append(args, "-o", "json")...)
		var cli plans
		if code != 0 || json.Unmarshal([]byte(out), &cli) != nil {
			t.Fatalf("%s: exit %d: %s", page.Command, code, errs)
		}
		if !reflect.DeepEqual(page.Plans, cli.Plans) {
			t.Errorf("%s prints other plans than the page shows:\npage %+v\ncli  %+v", page.Command, page.Plans, cli.Plans)
		}
	}
}
