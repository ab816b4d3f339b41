package scenarios

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gpusim/gpusim/train"
)

// A value that starts with '@' names a file on this machine: a GPU or host profile, or a model
// file (hw.LookupGPU, hw.LookupHost, models.Get). Whether a value does is decided on the value
// as YAML parsed it, never on the text that was typed, since YAML spells '@' in many ways
// ("\x40", "\u0040", a folded block): the parsed value is what the lookups read.

// ErrFileRef is the error a scenario that refuses files (Scenario.NoFiles) gives for a value that
// names one.
var ErrFileRef = errors.New("names a file")

// FileRef is a configuration value that names a file.
type FileRef struct {
	Key  string // the scenario key: "model", "hardware.gpu", "hardware.host.profile"
	Path string // the file it names (the value after '@')
}

// fileKeys are the scenario keys whose values may name a file, with the field each sets.
var fileKeys = []struct {
	key   string
	value func(*train.Config) string
}{
	{"model", func(c *train.Config) string { return c.Model }},
	{"hardware.gpu", func(c *train.Config) string { return c.GPU }},
	{"hardware.host.profile", func(c *train.Config) string { return c.Host }},
}

// FileRefs returns the values of c that name files, in key order. The lookups trim spaces before
// they look for the '@' (models.Get does, hw.LookupGPU does not), so a value is a file reference
// here when it is one for any of them.
func FileRefs(c *train.Config) []FileRef {
	var refs []FileRef
	for _, k := range fileKeys {
		if p, ok := strings.CutPrefix(strings.TrimSpace(k.value(c)), "@"); ok {
			refs = append(refs, FileRef{Key: k.key, Path: p})
		}
	}
	return refs
}

// checkNoFiles is the NoFiles rule: the first file reference in the configuration, as an error
// at place.
func (s *Scenario) checkNoFiles(place func(key string) string) error {
	if !s.NoFiles {
		return nil
	}
	for _, r := range FileRefs(&s.Config) {
		return &Error{Place: place(r.Key), Field: r.Key, Err: fmt.Errorf("%w (@%s): only built-in names are allowed here", ErrFileRef, r.Path)}
	}
	return nil
}
