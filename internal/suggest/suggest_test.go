package suggest

import "testing"

func TestClosest(t *testing.T) {
	gpus := []string{"a10", "a100-40gb", "a100-80gb", "h100-80gb", "h200", "t4", "v100-16gb", "v100-32gb", "rtx3090", "rtx4090"}
	for _, tc := range []struct{ name, want string }{
		{"h20", "h200"},            // a deletion
		{"H200", "h200"},           // case
		{"a100-40bg", "a100-40gb"}, // a swap
		{"v100-16g", "v100-16gb"},
		{"rtx3080", "rtx3090"},
		{"h100", "h100-80gb"}, // the start of a name, though h200 is one edit away
		{"a100", "a100-40gb"}, // the start of two: the first
		{"k80", ""},           // nothing like it
		{"tpu-v4", ""},
		{"", ""},
	} {
		if got := Closest(tc.name, gpus); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestHint(t *testing.T) {
	known := []string{"resnet50", "mobilenetv2"}
	if got, want := Hint("resnet5", known, "gpusim list models"), `did you mean "resnet50"? gpusim list models lists all 2`; got != want {
		t.Errorf("Hint = %q, want %q", got, want)
	}
	if got, want := Hint("alexnet", known, "gpusim list models"), `gpusim list models lists all 2`; got != want {
		t.Errorf("Hint = %q, want %q", got, want)
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"ab", "ba", 1}, {"h200", "h200", 0}} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
