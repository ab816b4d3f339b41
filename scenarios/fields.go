package scenarios

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/train"
)

// fieldKeys maps the Go path of a train.Config field, as a train.FieldError names it, to the
// scenario key that sets it: the schema's fields, read once.
var fieldKeys = func() map[string]string {
	m := map[string]string{}
	for _, f := range schema {
		for _, path := range strings.Fields(f.fields) {
			m[path] = f.path
		}
	}
	return m
}()

var processPath = regexp.MustCompile(`^Processes\[(\d+)\](?:\.(.+))?$`)

// Key returns the scenario key of the train.Config field at Go path path ("Memory.LimitMiB"
// is memory.limit_mib, "Processes[0].UsedBytes" processes[0].used_mib); a path it does not
// know is returned as it is.
func Key(path string) string {
	if k, ok := fieldKeys[path]; ok {
		return k
	}
	switch path {
	case "Memory":
		return "memory"
	case "Input":
		return "input"
	}
	m := processPath.FindStringSubmatch(path)
	if m == nil {
		return path
	}
	p := "processes[" + m[1] + "]"
	field, rest, _ := strings.Cut(m[2], ".")
	switch {
	case m[2] == "":
		return p
	case field == "Memory" && rest == "":
		return p + ".memory"
	case field == "Memory":
		if i := slices.IndexFunc(memorySection, func(f memoryField) bool { return f.field == rest }); i >= 0 {
			return p + ".memory." + memorySection[i].key
		}
	case rest == "":
		if i := slices.IndexFunc(processSection, func(f processField) bool { return f.field == field }); i >= 0 {
			return p + "." + processSection[i].key
		}
	}
	return path
}

// RunError turns an error of train.Run on s.Config into a scenario error: a
// *train.FieldError becomes an *Error naming the place that set the field's key (the
// scenario's source when a default) and the key; ok is false for other errors.
func (s *Scenario) RunError(err error) (*Error, bool) {
	var fe *train.FieldError
	if !errors.As(err, &fe) {
		return nil, false
	}
	key := Key(fe.Field)
	place := s.origin[key]
	if place == "" {
		place = s.Source
	}
	return &Error{Place: place, Field: key, Err: keyed(fe)}, true
}

// keyed is fe's message with the fields it mentions (train.FieldError.Mentions, Go paths)
// named by their keys: train's messages name Go fields, a scenario's user knows keys.
func keyed(fe *train.FieldError) error {
	if len(fe.Mentions) == 0 {
		return fe.Err
	}
	paths := slices.Clone(fe.Mentions)
	// Longest first, so that a path inside a longer one (VisibleDevices in
	// CUDAVisibleDevices) is not replaced there.
	sort.SliceStable(paths, func(i, j int) bool { return len(paths[i]) > len(paths[j]) })
	var pairs []string
	for _, p := range paths {
		pairs = append(pairs, p, Key(p))
	}
	return &keyedError{msg: strings.NewReplacer(pairs...).Replace(fe.Err.Error()), err: fe.Err}
}

// keyedError is a train error's message in keys; it unwraps to the error.
type keyedError struct {
	msg string
	err error
}

func (e *keyedError) Error() string { return e.msg }
func (e *keyedError) Unwrap() error { return e.err }

// place is where key got its value: its own --set or file line, else its parent's (memory
// via --set memory.x, processes[0]), else file (or the source) marked as a default.
func (s *Scenario) place(key, file string) string {
	place := s.origin[key]
	for f := key; place == "" && f != ""; {
		i := strings.LastIndexAny(f, "[.")
		if i <= 0 {
			break
		}
		f = f[:i]
		place = s.origin[f]
	}
	if place == "" {
		place = file
		if place == "" {
			place = s.Source
		}
		place += " (default)"
	}
	return place
}

// SetLines writes changes as the --set overrides a user would give (KEY=VALUE), in order:
// each field's key (Key) and its value as the change writes it; nil for none.
func SetLines(changes []analysis.FieldChange) []string {
	var out []string
	for _, c := range changes {
		out = append(out, Key(c.Field)+"="+c.Value)
	}
	return out
}

// Remedies re-simulates, in sess, the changes that may feed the GPU of res, an input-bound
// run of s (analysis.Session.Remedies), and writes each remedy's changes as its --set
// overrides (Remedy.Set): analysis knows train's fields, not the keys.
func (s *Scenario) Remedies(ctx context.Context, sess *analysis.Session, res *analysis.Result) error {
	if err := sess.Remedies(ctx, s.Config, res); err != nil {
		return err
	}
	for i := range res.Remedies {
		res.Remedies[i].Set = SetLines(res.Remedies[i].Changes)
	}
	return nil
}
