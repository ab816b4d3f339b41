package web

import (
	"encoding/json"
	"testing"
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
