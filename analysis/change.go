package analysis

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/gpusim/gpusim/train"
)

// FieldChange is one setting a plan or a remedy changes, by train.Config field path
// ("Input.Prefetch"), and the value it takes, written as a scenario value: an integer, true
// or false, a string, or autotune for tf.data.AUTOTUNE (train.Autotune). scenarios.SetLines
// turns the path into the scenario key of a --set line.
type FieldChange struct {
	Field string `json:"field"`
	Value string `json:"value"`
}

// autotune is tf.data.AUTOTUNE (train.Autotune) as a FieldChange value.
const autotune = "autotune"

// apply sets the field of c at fc.Field to fc.Value.
func (fc FieldChange) apply(c *train.Config) error {
	v := reflect.ValueOf(c).Elem()
	for _, name := range strings.Split(fc.Field, ".") {
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return fmt.Errorf("%s: not set in the configuration", fc.Field)
			}
			v = v.Elem()
		}
		if v = v.FieldByName(name); !v.IsValid() {
			return fmt.Errorf("%s: train.Config has no such field", fc.Field)
		}
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fc.Value)
	case reflect.Bool:
		b, err := strconv.ParseBool(fc.Value)
		if err != nil {
			return fmt.Errorf("%s: %w", fc.Field, err)
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64:
		if fc.Value == autotune {
			v.SetInt(train.Autotune)
			return nil
		}
		n, err := strconv.ParseInt(fc.Value, 10, 64)
		if err != nil {
			return fmt.Errorf("%s: %w", fc.Field, err)
		}
		v.SetInt(n)
	default:
		return fmt.Errorf("%s: a %s field, not one a change sets", fc.Field, v.Kind())
	}
	return nil
}
