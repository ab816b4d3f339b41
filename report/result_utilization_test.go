package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/train"
)

// The text report, JSON and CSV agree on gpu_utilization: a run that completed no step reports
// no utilization (text "-", JSON and CSV 0, with steps_completed 0 next to it); a run that
// trained reports the GPU's busy fraction in all three; an idle device is busy 0 and marked idle.
func TestResultUtilizationAgreesAcrossFormats(t *testing.T) {
	oom := &train.OOM{Step: 1, Op: "conv1", Tensor: "conv1", Device: "/device:GPU:0", Message: "OOM when allocating tensor"}
	tests := []struct {
		name              string
		res               train.Result
		wantUtil          float64 // JSON and CSV gpu_utilization
		wantBusy          []float64
		wantIdle          []string // CSV idle column per row
		wantText          string
		wantStepsComplete string
	}{
		{"oom in step 1", train.Result{Scenario: "s", StepsRequested: 20, Replicas: 1, GPUs: 1, OOM: oom,
			GPUUtilization: 0.998, InputStallFraction: 0.1,
			Devices: []train.Device{{Name: "/device:GPU:0", BusyFraction: 0.998}}},
			0, []float64{0}, []string{"false"}, "GPU utilization      - (no step completed)", "0"},
		{"trained, one idle GPU", train.Result{Scenario: "s", StepsRequested: 2, Replicas: 1, GPUs: 2,
			StepTimes: []float64{0.1, 0.1}, StepTime: 0.1, GPUUtilization: 0.75, Elapsed: 0.2,
			Devices: []train.Device{{Name: "/device:GPU:1", Physical: 3, BusyFraction: 0.75}, {Name: "/device:GPU:0", Physical: 2, Idle: true}}},
			0.75, []float64{0.75, 0}, []string{"false", "true"}, "GPU utilization      75.0%", "2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var txt bytes.Buffer
			if err := WriteResultText(&txt, &analysis.Result{Result: &tt.res}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(txt.String(), tt.wantText) {
				t.Errorf("text lacks %q:\n%s", tt.wantText, txt.String())
			}

			j := NewResultJSON(&analysis.Result{Result: &tt.res})
			if j.GPUUtilization != tt.wantUtil {
				t.Errorf("json gpu_utilization = %v, want %v", j.GPUUtilization, tt.wantUtil)
			}
			for i, d := range j.Devices {
				if d.BusyFraction != tt.wantBusy[i] {
					t.Errorf("json devices[%d].busy_fraction = %v, want %v", i, d.BusyFraction, tt.wantBusy[i])
				}
			}
			var jb bytes.Buffer
			if err := WriteResultJSON(&jb, &analysis.Result{Result: &tt.res}); err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(jb.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			if u, ok := m["gpu_utilization"].(float64); !ok || u != tt.wantUtil {
				t.Errorf("json gpu_utilization = %v (a number?), want %v", m["gpu_utilization"], tt.wantUtil)
			}

			var cb bytes.Buffer
			if err := WriteResultCSV(&cb, &analysis.Result{Result: &tt.res}); err != nil {
				t.Fatal(err)
			}
			recs, err := csv.NewReader(&cb).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 1+len(tt.res.Devices) {
				t.Fatalf("csv has %d records, want a header and %d rows", len(recs), len(tt.res.Devices))
			}
			col := map[string]int{}
			for i, h := range recs[0] {
				col[h] = i
			}
			for _, k := range []string{"steps", "steps_completed", "gpu_utilization", "idle", "busy_fraction", "physical_gpu"} {
				if _, ok := col[k]; !ok {
					t.Fatalf("csv header %v lacks %s", recs[0], k)
				}
			}
			for i, r := range recs[1:] {
				if got := r[col["steps_completed"]]; got != tt.wantStepsComplete {
					t.Errorf("csv row %d steps_completed = %s, want %s", i, got, tt.wantStepsComplete)
				}
				if got, want := r[col["gpu_utilization"]], strconv.FormatFloat(tt.wantUtil, 'g', -1, 64); got != want {
					t.Errorf("csv row %d gpu_utilization = %s, want %s", i, got, want)
				}
				if got := r[col["idle"]]; got != tt.wantIdle[i] {
					t.Errorf("csv row %d idle = %s, want %s", i, got, tt.wantIdle[i])
				}
				if got, want := r[col["busy_fraction"]], strconv.FormatFloat(tt.wantBusy[i], 'g', -1, 64); got != want {
					t.Errorf("csv row %d busy_fraction = %s, want %s", i, got, want)
				}
			}
		})
	}
}
