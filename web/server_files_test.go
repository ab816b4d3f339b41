package web

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpusim/gpusim/scenarios"
)

// The page reads no file of the serving machine: hardware.host.profile=@FILE is refused as the
// GPU and model keys' @FILE are, and a malformed query ("scenario=%ZZ") is a 400, not the
// default scenario with 200.
func TestBadRequestsReadNoFile(t *testing.T) {
	ts := newServer(t, Options{})
	for _, tc := range []struct{ name, url, want string }{
		{"a host profile file", runURL(ts.URL, "default", "hardware.host.profile=@/dev/zero"),
			"--set hardware.host.profile=@/dev/zero: hardware.host.profile: the page runs built-in host profiles only (gpusim list hosts); a profile file needs gpusim run"},
		{"a malformed query", ts.URL + "/api/run?scenario=%ZZ", `malformed query: invalid URL escape "%ZZ"`},
	} {
		code, body := get(t, tc.url)
		var e struct{ Error string }
		if err := json.Unmarshal(body, &e); err != nil {
			t.Errorf("%s: body %q is not JSON: %v", tc.name, body, err)
			continue
		}
		if code != 400 || e.Error != tc.want {
			t.Errorf("%s: GET = %d %q, want 400 %q", tc.name, code, e.Error, tc.want)
		}
	}
}

// The value of a --set is YAML, which spells '@' in many ways; the page refuses a file by the
// value as parsed, so no spelling opens one. Each path here is a real file gpusim could read (a
// valid GPU profile, a FIFO that would block the handler forever if opened): a 400 that quotes
// none of the file's content is the only right answer.
func TestEscapedFileReferencesAreRefused(t *testing.T) {
	dir := t.TempDir()
	profile := filepath.Join(dir, "gpu.yaml")
	if err := os.WriteFile(profile, []byte("base: h200\nname: secret-gpu-name\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	ts := newServer(t, Options{})
	client := &http.Client{Timeout: 15 * time.Second}
	for _, set := range []string{
		`model="\x40` + profile + `"`,
		`model="\u0040` + fifo + `"`,
		`hardware.gpu="\x40` + profile + `"`,
		`hardware.gpu=" @` + profile + `"`,
		`hardware.gpu='@` + profile + `'`,
		"hardware.gpu=|-\n  @" + profile,
		`hardware.host.profile="\U00000040` + fifo + `"`,
		`hardware.gpu=!!str "\x40` + fifo + `"`,
	} {
		// A FIFO that is opened blocks its handler: the client gives up and the test says so.
		resp, err := client.Get(runURL(ts.URL, "default", set))
		if err != nil {
			t.Errorf("--set %s: %v (the server opened the file?)", set, err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		code := resp.StatusCode
		var e struct{ Error string }
		if err := json.Unmarshal(body, &e); err != nil {
			t.Errorf("--set %s: body %q is not JSON: %v", set, body, err)
			continue
		}
		if code != 400 || !strings.Contains(e.Error, "the page runs") || strings.Contains(e.Error, "secret") {
			t.Errorf("--set %s: GET = %d %q, want 400 refusing the file unread", set, code, e.Error)
		}
	}
}

// FuzzServerSets sends arbitrary overrides through the page's scenario path: it never panics,
// and whatever it accepts names no file (scenarios.FileRefs is empty), so nothing a request
// sends can make the server open a path.
func FuzzServerSets(f *testing.F) {
	for _, s := range []string{
		"batch=64", `model="\x40/etc/passwd"`, "hardware.gpu=@x", `hardware.host.profile="\u0040y"`,
		"model=resnet50:image=160", "hardware.gpu=|\n  @z", "memory.growth=true", "model= @a",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, set string) {
		sc, err := scenario("default", []string{set})
		if err != nil {
			return
		}
		if refs := scenarios.FileRefs(&sc.Config); len(refs) > 0 {
			t.Fatalf("--set %q accepted with a file reference %v", set, refs)
		}
	})
}

// An unknown scenario gets one suggestion, as gpusim run gives it, not the list of built-ins.
func TestUnknownScenarioSuggests(t *testing.T) {
	ts := newServer(t, Options{})
	code, body := get(t, runURL(ts.URL, "input-bund"))
	var e struct{ Error string }
	json.Unmarshal(body, &e)
	want := `unknown scenario "input-bund" (did you mean "input-bound"?`
	if code != 400 || !strings.HasPrefix(e.Error, want) || strings.Contains(e.Error, "xla-recompile") {
		t.Errorf("GET scenario=input-bund = %d %q, want 400 starting %q", code, e.Error, want)
	}
}
