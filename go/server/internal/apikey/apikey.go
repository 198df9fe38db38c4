// Package apikey checks the API key of strata-server's two doors (the
// native API's bearer token, the Qdrant API's api-key header) in one way.
package apikey

import (
	"crypto/sha256"
	"crypto/subtle"
)

// Key is the digest of the configured key. Comparing digests in constant
// time keeps the time independent of the key's length as well as its bytes.
type Key [sha256.Size]byte

// New returns the Key of key.
func New(key string) Key { return sha256.Sum256([]byte(key)) }

// Matches reports whether token is the key.
func (k *Key) Matches(token string) bool {
	got := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(got[:], k[:]) == 1
}
