package scenarios

import (
	"bytes"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/gpusim/gpusim/internal/suggest"
	"go.yaml.in/yaml/v3"
)

// BuiltinYAML returns the embedded file of a built-in scenario as written, comments included
// (the comment at its top explains the case).
func BuiltinYAML(name string) ([]byte, error) {
	data, err := builtinFS.ReadFile(path.Join("builtin", name+".yaml"))
	if err != nil {
		return nil, fmt.Errorf("unknown scenario %q (%s)", name, suggest.Hint(name, Names(), "gpusim list scenarios"))
	}
	return data, nil
}

// WithSets returns the scenario document data with each "--set key=value" override written
// into it: the key's mapping path is created where missing and its value replaced, so that
// Parse of the result gives the configuration that Parse of data followed by SetAll(sets) gives
// (comments on untouched keys stay). source names data in errors; a bad override is the *Error
// Set would return.
func WithSets(source string, data []byte, sets []string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(source, err)
	}
	if len(doc.Content) == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &Error{Place: source, Err: fmt.Errorf("want a mapping of scenario keys, got a %s", kindName(root))}
	}
	for _, kv := range sets {
		place := "--set " + kv
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, &Error{Place: place, Err: fmt.Errorf("want key=value")}
		}
		if lookup(k) == nil {
			return nil, &Error{Place: place, Field: k, Err: unknownKey(k)}
		}
		if startsReserved(v) {
			v = strconv.Quote(strings.TrimSpace(v))
		}
		var val yaml.Node
		if err := yaml.Unmarshal([]byte(v), &val); err != nil {
			return nil, &Error{Place: place, Field: k, Err: fmt.Errorf("parse value: %w", err)}
		}
		n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: ""}
		if len(val.Content) > 0 {
			n = val.Content[0]
		}
		if err := put(root, strings.Split(k, "."), n); err != nil {
			return nil, &Error{Place: place, Field: k, Err: err}
		}
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("%s: encode yaml: %w", source, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("%s: encode yaml: %w", source, err)
	}
	return b.Bytes(), nil
}

// put sets the value at the mapping path keys below m, creating mappings on the way. A key
// spelled as a whole dotted path in the document ("memory.growth: true", which Parse accepts
// too) is replaced in place so that the key is not set twice.
func put(m *yaml.Node, keys []string, v *yaml.Node) error {
	whole := strings.Join(keys, ".")
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == whole {
			m.Content[i+1] = v
			return nil
		}
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != keys[0] {
			continue
		}
		if len(keys) == 1 {
			m.Content[i+1] = v
			return nil
		}
		c := m.Content[i+1]
		if c.Kind != yaml.MappingNode {
			return fmt.Errorf("%s is a %s in the scenario, not a mapping", keys[0], kindName(c))
		}
		return put(c, keys[1:], v)
	}
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: keys[0]}
	if len(keys) == 1 {
		m.Content = append(m.Content, key, v)
		return nil
	}
	c := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	m.Content = append(m.Content, key, c)
	return put(c, keys[1:], v)
}
