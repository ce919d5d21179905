package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
)

// maxJSONBody bounds API request bodies; nothing the API takes is larger.
const maxJSONBody = 1 << 20

var errTrailingData = errors.New("more than one JSON value")

// bindJSON decodes the request body into v, answering 400 with a readable
// message when it is not valid JSON of the expected shape. A field the
// endpoint does not know is refused (unknown_field) rather than ignored: a
// misspelt "idle_minutes" would otherwise launch with the default idle
// timeout and say nothing.
func (h *Handler) bindJSON(c *gin.Context, v any) bool {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, maxJSONBody)
	dec := json.NewDecoder(c.Request.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		// One object, nothing after it: `{…} {…}` (two bodies pasted, a
		// script's stray write) was answered from the first alone.
		var extra json.RawMessage
		switch err = dec.Decode(&extra); {
		case errors.Is(err, io.EOF):
			return true
		case err == nil:
			err = errTrailingData
		}
	}
	var tooLarge *http.MaxBytesError
	var ve *models.ValidationError
	switch {
	case errors.As(err, &ve):
		// A value's own type refused it (cpu_cores 0.0001): its field and
		// why, not "the request body is not valid JSON for this endpoint".
		h.fail(c, ve)
	case errors.As(err, &tooLarge):
		h.fail(c, errTooLarge)
	case errors.Is(err, errTrailingData):
		h.fail(c, newError(http.StatusBadRequest, "invalid_body", "the request body holds more than one JSON value: send one object"))
	case errors.Is(err, io.EOF):
		h.fail(c, newError(http.StatusBadRequest, "invalid_body", "the request body is empty: this endpoint takes a JSON object"))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json has no typed error for it; the text is its API.
		field := strings.TrimPrefix(err.Error(), "json: unknown field ")
		h.fail(c, newError(http.StatusBadRequest, "unknown_field", "this endpoint has no field "+field+": check its spelling"))
	default:
		msg := jsonProblem(err)
		var se *json.SyntaxError
		if errors.As(err, &se) && strings.HasPrefix(c.ContentType(), "application/x-www-form-urlencoded") && se.Offset <= 2 {
			// name=value&… (curl -d name=x, a form's encoding): not JSON
			// at all, which the parser's "invalid character 'a' in
			// literal null" did not say.
			msg = "the request body is form data (name=value&…), not JSON: this endpoint takes a JSON object, e.g. {\"name\": \"…\"}"
		}
		h.fail(c, newError(http.StatusBadRequest, "invalid_body", msg))
	}
	return false
}

// jsonProblem words a decoding error for the person who wrote the body:
// which field has the wrong kind of value, or where the JSON breaks —
// not encoding/json's Go types ("cannot unmarshal array into Go value of
// type struct { Rates []struct { … } }").
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te) && te.Field == "":
		return "the request body must be a JSON object, not " + jsonValueName(te.Value)
	case errors.As(err, &te):
		return "the field " + te.Field + " must be " + jsonKindName(te.Type) + ", not " + jsonValueName(te.Value)
	case errors.As(err, &se):
		return fmt.Sprintf("the request body is not valid JSON (at byte %d): %s", se.Offset, se.Error())
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the request body is not valid JSON: it ends early"
	case errors.As(err, new(*time.ParseError)):
		// Its text spells Go's reference layout, "2006-01-02T15:04:05Z07:00".
		return "a time in the request body is not an RFC 3339 time: write it as 2030-01-01T00:00:00Z (a date alone is not enough)"
	}
	return "the request body is not valid JSON for this endpoint: " + err.Error()
}

// jsonKindName names what a Go type takes in JSON.
func jsonKindName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[nameOrID]() {
		return "a name or a positive whole id"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list"
	default:
		return "an object"
	}
}

// jsonValueName is encoding/json's name of the value it found ("array",
// "number 1.5", "string") as a reader says it.
func jsonValueName(v string) string {
	switch {
	case v == "array":
		return "a list"
	case v == "object":
		return "an object"
	case v == "bool":
		return "true or false"
	case strings.HasPrefix(v, "number"):
		return v
	}
	return "a " + v
}

// nonNil makes an empty list encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
