// Package yamldoc reads a YAML file that must hold one document: yaml.Unmarshal reads the
// first of several and silently ignores the rest, which for a scenario or a profile file means
// keys the user wrote and gpusim never read.
package yamldoc

import (
	"bytes"
	"errors"
	"io"

	"go.yaml.in/yaml/v3"
)

// Decode parses the first document of data into doc (a zero node for an empty file) and
// returns the line of a second, non-empty document (0 when there is none: an empty trailing
// document, a "---" at the end, holds nothing to ignore). err is the decoder's error, for the
// caller to place in its file.
func Decode(data []byte) (doc yaml.Node, second int, err error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return doc, 0, nil
		}
		return doc, 0, err
	}
	for {
		var extra yaml.Node
		err := dec.Decode(&extra)
		if errors.Is(err, io.EOF) {
			return doc, 0, nil
		}
		if err != nil {
			return doc, 0, err
		}
		if len(extra.Content) > 0 && !(extra.Content[0].ShortTag() == "!!null" && extra.Content[0].Value == "") {
			return doc, extra.Content[0].Line, nil
		}
	}
}
