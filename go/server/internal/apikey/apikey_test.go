package apikey

import "testing"

// TestMatchesOnlyTheKey: the key itself, never a prefix, an extension, a
// different case or an empty token.
func TestMatchesOnlyTheKey(t *testing.T) {
	k := New("s3cret")
	if !k.Matches("s3cret") {
		t.Fatal("the key itself does not match")
	}
	for _, bad := range []string{"", "s3cre", "s3cret ", "S3CRET", "s3cret\x00"} {
		if k.Matches(bad) {
			t.Fatalf("%q matches", bad)
		}
	}
}
