package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// completeBash sources the bash script and asks _gpusim to complete words (the last one is
// the word under the cursor), as bash's programmable completion would.
func completeBash(t *testing.T, script string, words ...string) []string {
	t.Helper()
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = shQuote(w)
	}
	prog := "source " + shQuote(script) + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" +
		strconv.Itoa(len(words)-1) + "\n_gpusim\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
	out, err := exec.Command("bash", "-c", prog).CombinedOutput()
	if err != nil {
		t.Fatalf("bash completing %q: %v\n%s", words, err, out)
	}
	return strings.Fields(string(out))
}

func TestCompletionBash(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	out, stderr, code := allocRun(t, "completion", "bash")
	if code != 0 {
		t.Fatalf("gpusim completion bash: exit %d: %s", code, stderr)
	}
	script := filepath.Join(t.TempDir(), "gpusim.bash")
	if err := os.WriteFile(script, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command("bash", "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, msg)
	}
	has := func(got []string, want ...string) bool {
		for _, w := range want {
			found := false
			for _, g := range got {
				found = found || g == w
			}
			if !found {
				return false
			}
		}
		return true
	}
	var all []string
	for n := range commands {
		all = append(all, n)
	}
	for _, tc := range []struct {
		words []string
		want  []string
	}{
		{[]string{"gpusim", ""}, all},
		{[]string{"gpusim", "--v"}, []string{"--version"}},
		{[]string{"gpusim", "capacity", ""}, []string{"max-batch", "gpus"}},
		{[]string{"gpusim", "capacity", "max-batch", "--mu"}, []string{"--multiple"}},
		{[]string{"gpusim", "capacity", "gpus", "--thr"}, []string{"--throughput"}},
		{[]string{"gpusim", "run", "--s"}, []string{"--set"}},
		{[]string{"gpusim", "run", "input-b"}, []string{"input-bound"}},
		{[]string{"gpusim", "run", "--set", "hardware.g"}, []string{"hardware.gpu="}},
		{[]string{"gpusim", "compare", ""}, []string{"merge", "--vary", "memory-modes"}},
		{[]string{"gpusim", "list", ""}, []string{"models", "devices", "hosts", "scenarios"}},
		{[]string{"gpusim", "alloc", "replay", "--m"}, []string{"--mode"}},
		{[]string{"gpusim", "calibrate", ""}, []string{"inventory", "record", "fit"}},
		{[]string{"gpusim", "validate", "--r"}, []string{"--rows"}},
		{[]string{"gpusim", "completion", ""}, []string{"--help"}},
	} {
		if got := completeBash(t, script, tc.words...); !has(got, tc.want...) {
			t.Errorf("completing %q = %q, want at least %q", tc.words, got, tc.want)
		}
	}
	for _, words := range [][]string{{"gpusim", "run", "--zzz"}, {"gpusim", "validate", "--set", "hardware."}} {
		if got := completeBash(t, script, words...); len(got) != 0 {
			t.Errorf("completing %q = %q, want nothing", words, got)
		}
	}
}

func TestCompletionZshFish(t *testing.T) {
	zsh, _, code := allocRun(t, "completion", "zsh")
	bash, _, _ := allocRun(t, "completion", "bash")
	if code != 0 || !strings.HasPrefix(zsh, "#compdef gpusim\n") || !strings.HasSuffix(zsh, bash) {
		t.Errorf("gpusim completion zsh (exit %d) is not #compdef plus the bash function through bashcompinit", code)
	}
	fish, _, code := allocRun(t, "completion", "fish")
	if code != 0 {
		t.Fatalf("gpusim completion fish: exit %d", code)
	}
	for _, want := range []string{"-a run -d ", "-a capacity -d ", "__fish_seen_subcommand_from capacity; and __fish_seen_subcommand_from max-batch' -l multiple",
		"__fish_seen_subcommand_from run' -l set", "-s o -l output", "__fish_prev_arg_in --set --vary; and not __fish_seen_subcommand_from validate"} {
		if !strings.Contains(fish, want) {
			t.Errorf("gpusim completion fish lacks %q", want)
		}
	}
	for i, l := range strings.Split(strings.TrimSpace(fish), "\n") {
		if !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "complete -c gpusim ") {
			t.Errorf("fish line %d is not a complete command: %q", i+1, l)
		}
		if strings.Count(strings.ReplaceAll(l, `\'`, ""), "'")%2 != 0 {
			t.Errorf("fish line %d has an unclosed quote: %q", i+1, l)
		}
	}
	if _, _, code := allocRun(t, "completion", "tcsh"); code != 2 {
		t.Errorf("gpusim completion tcsh: exit %d, want 2", code)
	}
}
