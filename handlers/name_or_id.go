package handlers

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
)

// nameOrID is a launch request's image or flavor: a name or an id (SPEC
// §8). Ids are numbers in GET /images and /flavors, so a script may send
// the number as it read it (5) as well as a string ("5" or "CPU small").
type nameOrID string

func (n *nameOrID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*n = nameOrID(s)
		return nil
	}
	id, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || id <= 0 {
		// The decoder names the field (jsonProblem words it).
		return &json.UnmarshalTypeError{Value: jsonValueOf(b), Type: reflect.TypeFor[nameOrID]()}
	}
	*n = nameOrID(strconv.FormatInt(id, 10))
	return nil
}

// jsonValueOf is encoding/json's name of a raw value's kind.
func jsonValueOf(b []byte) string {
	switch {
	case len(b) == 0:
		return "nothing"
	case b[0] == '[':
		return "array"
	case b[0] == '{':
		return "object"
	case b[0] == 't' || b[0] == 'f':
		return "bool"
	case b[0] == 'n':
		return "null"
	}
	return "number " + string(b)
}
