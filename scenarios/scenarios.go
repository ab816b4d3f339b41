package scenarios

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/gpusim/gpusim/internal/limitread"
	"github.com/gpusim/gpusim/internal/suggest"
	"github.com/gpusim/gpusim/internal/yamldoc"
	"github.com/gpusim/gpusim/train"
	"go.yaml.in/yaml/v3"
)

//go:embed builtin/*.yaml
var builtinFS embed.FS

// Scenario is a loaded scenario: the run configuration plus where each value came from.
type Scenario struct {
	// Name is the scenario's name: its name key, else the file's base name without extension.
	Name string
	// Description is its description key.
	Description string
	// Source is the file path, or "builtin:NAME" for an embedded scenario.
	Source string
	// Config is the run configuration: DefaultConfig overlaid with the file and the --set
	// overrides.
	Config train.Config
	// NoFiles refuses every value that names a file ("@path", FileRefs) before anything reads
	// it: Set and Check fail with ErrFileRef instead. gpusim serve sets it, so that nothing a
	// request sends can make the server open a path.
	NoFiles bool

	origin map[string]string // scenario key -> "file:line" or "--set k=v" that set it last
}

// Error is a bad scenario: the place (file:line or the --set argument), the key and the
// problem.
type Error struct {
	Place string // "scenario.yaml:12" or "--set batch=-1"
	Field string // "batch", "memory.limit_mib", "processes[0].used_mib"
	Err   error
}

func (e *Error) Error() string {
	if e.Field == "" {
		return e.Place + ": " + e.Err.Error()
	}
	return e.Place + ": " + e.Field + ": " + e.Err.Error()
}
func (e *Error) Unwrap() error { return e.Err }

// posError is an error at a line inside the document, raised by nested setters.
type posError struct {
	line  int
	field string
	err   error
}

func (e *posError) Error() string { return fmt.Sprintf("line %d: %s: %v", e.line, e.field, e.err) }

func wrapPos(line int, field string, err error) error {
	var pe *posError
	if errors.As(err, &pe) {
		return err
	}
	return &posError{line: line, field: field, err: err}
}

// Names returns the built-in scenario names, sorted.
func Names() []string {
	ents, err := builtinFS.ReadDir("builtin")
	if err != nil {
		panic("scenarios: embedded library unreadable: " + err.Error())
	}
	var out []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Builtin loads an embedded scenario by name.
func Builtin(name string) (*Scenario, error) {
	data, err := builtinFS.ReadFile(path.Join("builtin", name+".yaml"))
	if err != nil {
		return nil, fmt.Errorf("unknown scenario %q (%s)", name, suggest.Hint(name, Names(), "gpusim list scenarios"))
	}
	return Parse("builtin:"+name, data)
}

// maxScenarioBytes bounds a scenario file: they are a few hundred bytes of YAML.
const maxScenarioBytes = 4 << 20

// Load reads a scenario file.
func Load(file string) (*Scenario, error) {
	data, err := limitread.ReadFile(file, maxScenarioBytes)
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	return Parse(file, data)
}

// Resolve loads arg as a file when it names one (or contains a path separator or ends in
// .yaml/.yml), else as a built-in; an empty arg is the built-in "default".
func Resolve(arg string) (*Scenario, error) {
	if arg == "" {
		return Builtin("default")
	}
	if _, err := os.Stat(arg); err == nil || strings.ContainsRune(arg, os.PathSeparator) ||
		strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") {
		return Load(arg)
	}
	return Builtin(arg)
}

// New is a scenario that sets nothing yet: train.DefaultConfig, named source, for Set to
// build on (a measurement's overrides). Errors of Check name source for keys not set.
func New(source string) *Scenario {
	s := &Scenario{Source: source, Name: source, Config: train.DefaultConfig(), origin: map[string]string{}}
	s.Config.Name = source
	return s
}

// Parse reads a scenario from YAML. source names it in errors ("file.yaml", "builtin:x").
// Keys not in the file keep train.DefaultConfig's values.
func Parse(source string, data []byte) (*Scenario, error) {
	s := &Scenario{Source: source, Config: train.DefaultConfig(), origin: map[string]string{}}
	s.Name = strings.TrimSuffix(strings.TrimSuffix(path.Base(strings.TrimPrefix(source, "builtin:")), ".yaml"), ".yml")
	s.Config.Name = s.Name
	file := strings.TrimPrefix(source, "builtin:")
	if strings.HasPrefix(source, "builtin:") {
		file = "builtin/" + file + ".yaml"
	}
	// One document: a second one ("---" then more keys) would be silently ignored.
	doc, second, err := yamldoc.Decode(data)
	if err != nil {
		if rerr := reservedValueError(file, data); rerr != nil {
			return nil, rerr
		}
		return nil, syntaxError(file, err)
	}
	if second > 0 {
		return nil, &Error{Place: fmt.Sprintf("%s:%d", file, second), Err: fmt.Errorf("a second YAML document: a scenario is one document (remove the --- and what follows, or merge the two)")}
	}
	if len(doc.Content) == 0 || doc.Content[0].ShortTag() == "!!null" && doc.Content[0].Value == "" {
		return nil, emptyError(file)
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &Error{Place: fmt.Sprintf("%s:%d", file, root.Line), Err: fmt.Errorf("want a mapping of scenario keys, got a %s", kindName(root))}
	}
	if err := s.walk(file, "", root); err != nil {
		return nil, err
	}
	if n := findKey(root, "description"); n != nil {
		s.Description = n.Value
	}
	if n := findKey(root, "name"); n != nil {
		s.Name = n.Value
	}
	return s, s.check(file)
}

// emptyError is a scenario file that sets nothing: empty, only comments, or cut off inside its
// header comment. Run as the defaults it would answer for a scenario nobody wrote, so it is an
// error, as a truncated scenario cut after its keys would be a syntax or value error.
func emptyError(file string) error {
	return &Error{Place: file + ":1", Err: fmt.Errorf("the scenario sets no keys (the file is empty or only comments): write at least one key, or name no scenario for the built-in default")}
}

func findKey(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func (s *Scenario) walk(file, prefix string, m *yaml.Node) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		p := k.Value
		if prefix != "" {
			p = prefix + "." + k.Value
		}
		if line, dup := seen[k.Value]; dup {
			return &Error{Place: fmt.Sprintf("%s:%d", file, k.Line), Field: p, Err: fmt.Errorf("duplicate key (first at line %d)", line)}
		}
		seen[k.Value] = k.Line
		if f := lookup(p); f != nil {
			err := checkLimits(p, v)
			if err == nil {
				err = f.set(&s.Config, v)
			}
			if err != nil {
				var pe *posError
				if errors.As(err, &pe) {
					return &Error{Place: fmt.Sprintf("%s:%d", file, pe.line), Field: pe.field, Err: pe.err}
				}
				return &Error{Place: fmt.Sprintf("%s:%d", file, v.Line), Field: p, Err: err}
			}
			s.origin[p] = fmt.Sprintf("%s:%d", file, v.Line)
			s.recordNested(p, v, func(n *yaml.Node) string { return fmt.Sprintf("%s:%d", file, n.Line) })
			continue
		}
		if isPrefix(p) {
			if v.Kind != yaml.MappingNode {
				return &Error{Place: fmt.Sprintf("%s:%d", file, v.Line), Field: p, Err: fmt.Errorf("want a mapping, got a %s", kindName(v))}
			}
			if err := s.walk(file, p, v); err != nil {
				return err
			}
			continue
		}
		return &Error{Place: fmt.Sprintf("%s:%d", file, k.Line), Field: p, Err: unknownKey(p)}
	}
	return nil
}

func unknownKey(p string) error {
	near := NearKeys(p)
	if len(near) > 0 && len(near) <= 8 {
		return fmt.Errorf("unknown key (did you mean %s?)", strings.Join(near, ", "))
	}
	return fmt.Errorf("unknown key (gpusim run --help lists the keys)")
}

// IsKey reports whether k is a scenario key (a leaf: "batch", "memory.mode").
func IsKey(k string) bool { return lookup(k) != nil }

// NearKeys returns the scenario keys that a name not among them may have meant: those closest
// in spelling (edit distance up to 2, or one a prefix of the other: "batchsize" -> batch),
// else the keys under the same parent.
func NearKeys(p string) []string {
	var near []string
	for _, f := range schema {
		if d := suggest.Distance(p, f.path); d <= 2 || strings.HasPrefix(p, f.path) || strings.HasPrefix(f.path, p+"_") {
			near = append(near, f.path)
		}
	}
	if len(near) == 0 {
		if i := strings.LastIndex(p, "."); i > 0 {
			for _, f := range schema {
				if strings.HasPrefix(f.path, p[:i+1]) {
					near = append(near, f.path)
				}
			}
		}
	}
	return near
}

// SetAll applies overrides in order, then checks the whole configuration (Check): checks that
// involve several keys (memory.mode=limit needs memory.limit_mib) see all of them, whatever
// their order.
func (s *Scenario) SetAll(kvs []string) error {
	for _, kv := range kvs {
		if err := s.Set(kv); err != nil {
			return err
		}
	}
	return s.Check()
}

// Check validates the configuration as it stands (Parse did so for the file; call it after
// Set). Errors name the place that set the offending key.
func (s *Scenario) Check() error { return s.check("") }

// Set applies one override "a.b=c"; the value is parsed as YAML ("true", "64", "[0, 1]"; one
// that starts with '@' or '`', reserved in YAML, is a string: hardware.gpu=@FILE) and must suit the key (type, sign, known name for model and hardware.gpu). Checks across keys
// wait for Check. Errors name the --set argument.
func (s *Scenario) Set(kv string) error {
	place := "--set " + kv
	k, v, ok := strings.Cut(kv, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return &Error{Place: place, Err: fmt.Errorf("want key=value")}
	}
	f := lookup(k)
	if f == nil {
		if isPrefix(k) {
			return &Error{Place: place, Field: k, Err: fmt.Errorf("is a mapping; set one of its keys")}
		}
		return &Error{Place: place, Field: k, Err: unknownKey(k)}
	}
	var doc yaml.Node
	if startsReserved(v) { // "@FILE": a string, not a YAML syntax error (reserved.go)
		v = strconv.Quote(strings.TrimSpace(v))
	}
	if err := yaml.Unmarshal([]byte(v), &doc); err != nil {
		return &Error{Place: place, Field: k, Err: fmt.Errorf("parse value: %w", err)}
	}
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: ""}
	if len(doc.Content) > 0 {
		n = doc.Content[0]
	}
	err := checkLimits(k, n)
	if err == nil {
		err = f.set(&s.Config, n)
	}
	if err != nil {
		var pe *posError
		if errors.As(err, &pe) {
			return &Error{Place: place, Field: pe.field, Err: pe.err}
		}
		return &Error{Place: place, Field: k, Err: err}
	}
	// Before the catalog check below, which reads the files that values name.
	if err := s.checkNoFiles(func(string) string { return place }); err != nil {
		return err
	}
	s.origin[k] = place
	s.recordNested(k, n, func(*yaml.Node) string { return place })
	switch k {
	case "description":
		s.Description = n.Value
	case "name":
		s.Name = n.Value
	}
	if k == "model" || k == "hardware.gpu" || k == "optimizer" {
		// Check only the key just set against the catalog (the others may still change).
		var probe train.Config
		switch k {
		case "model":
			probe.Model = s.Config.Model
		case "hardware.gpu":
			probe.GPU = s.Config.GPU
		case "optimizer":
			probe.Optimizer = s.Config.Optimizer
		}
		if err := train.CheckCatalog(&probe); err != nil {
			var fe *train.FieldError
			if errors.As(err, &fe) {
				return &Error{Place: place, Field: Key(fe.Field), Err: keyed(fe)}
			}
			return &Error{Place: place, Field: k, Err: err}
		}
	}
	return nil
}

// recordNested notes where the keys inside a list or mapping value came from
// ("processes[0].gpus"), so that validation errors point at their line.
func (s *Scenario) recordNested(prefix string, n *yaml.Node, place func(*yaml.Node) string) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := prefix + "." + n.Content[i].Value
			s.origin[p] = place(n.Content[i+1])
			s.recordNested(p, n.Content[i+1], place)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", prefix, i)
			s.origin[p] = place(c)
			s.recordNested(p, c, place)
		}
	}
}

// check validates the configuration and names the place that set the offending key.
func (s *Scenario) check(file string) error {
	if err := s.checkNoFiles(func(key string) string { return s.place(key, file) }); err != nil {
		return err
	}
	err := s.Config.Validate()
	if err == nil {
		err = train.CheckCatalog(&s.Config)
	}
	if err == nil {
		return nil
	}
	var errs []error
	for _, e := range unjoin(err) {
		var fe *train.FieldError
		if !errors.As(e, &fe) {
			errs = append(errs, &Error{Place: s.Source, Err: e})
			continue
		}
		key := Key(fe.Field)
		errs = append(errs, &Error{Place: s.place(key, file), Field: key, Err: keyed(fe)})
	}
	return oneLine(errs)
}

// oneLine makes the problems Validate found one error line: the first, and the keys of the
// others. Two checks of one key (input.cache is checked by train and by pipeline) count once.
func oneLine(errs []error) error {
	var keep []error
	seen := map[string]bool{}
	for _, e := range errs {
		var se *Error
		if errors.As(e, &se) && se.Field != "" {
			if seen[se.Field] {
				continue
			}
			seen[se.Field] = true
		}
		keep = append(keep, e)
	}
	if len(keep) <= 1 {
		return errors.Join(keep...)
	}
	var more []string
	for _, e := range keep[1:] {
		var se *Error
		if errors.As(e, &se) && se.Field != "" {
			more = append(more, se.Place+": "+se.Field)
		} else {
			more = append(more, e.Error())
		}
	}
	return &moreError{first: keep[0], more: more}
}

// moreError is the first problem of a scenario, naming where the others are.
type moreError struct {
	first error
	more  []string
}

func (e *moreError) Error() string {
	return fmt.Sprintf("%v (and %d more: %s)", e.first, len(e.more), strings.Join(e.more, "; "))
}
func (e *moreError) Unwrap() error { return e.first }

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// Origin returns where key got its value ("file.yaml:7", "--set batch=64"), or "" for a
// default.
func (s *Scenario) Origin(key string) string { return s.origin[key] }
