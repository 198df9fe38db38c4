package server

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestIncludeListsReadAsEncodingJSONReadsThem: the reflection-free reader
// of "include" lists gives encoding/json's answer, or leaves the list to it.
func TestIncludeListsReadAsEncodingJSONReadsThem(t *testing.T) {
	for _, text := range []string{`["distances"]`, ` [ "metadata" , "vectors" ] `, `[]`, `["x"]`,
		`["a\"b"]`, `["é"]`, `null`, `["x",]`, `["x"`, `[1]`, `"x"`, `["x"] 1`, `["\u0041"]`} {
		got, err := decodeStrings(nil, "include", []byte(text))
		var want []string
		wantErr := json.Unmarshal([]byte(text), &want)
		if (err != nil) != (wantErr != nil) || err == nil && (!slices.Equal(got, want) || (got == nil) != (want == nil)) {
			t.Errorf("%s: got %q, %v; encoding/json %q, %v", text, got, err, want, wantErr)
		}
	}
}
