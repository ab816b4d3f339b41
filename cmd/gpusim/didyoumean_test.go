package main

import (
	"strings"
	"testing"
)

// A mistyped GPU, host, model or scenario gets one suggestion, not the whole list of names.
func TestDidYouMean(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--set", "hardware.gpu=h20"}, `unknown GPU "h20" (did you mean "h200"?`},
		{[]string{"run", "--set", "hardware.host.profile=dgx-a10"}, `unknown host "dgx-a10" (did you mean "dgx-a100"?`},
		{[]string{"run", "--set", "model=resnet5"}, `unknown model "resnet5" (did you mean "resnet50"?`},
		{[]string{"run", "input-bond"}, `unknown scenario "input-bond" (did you mean "input-bound"?`},
		{[]string{"compare", "input-bond", "--vary", "batch=1,2"}, `did you mean "input-bound"?`},
	} {
		_, stderr, code := allocRun(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("gpusim %s: exit %d, %q; want exit 2 and %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
		// One line naming the suggestion, not 60 profile names.
		if strings.Count(stderr, ",") > 3 || strings.Count(stderr, "\n") > 1 {
			t.Errorf("gpusim %s: %q lists names; want one suggestion", strings.Join(tc.args, " "), stderr)
		}
	}
}
