package guard

import (
	"fmt"
	"net/http"
)

// Limits are the server's request limits, shared by both doors; zero
// values pick the defaults named. The engine's own parameter limits (ef,
// dimensions, document sizes) live in the engine, not here.
type Limits struct {
	// MaxBodyBytes bounds a request body; default 64 MiB
	// (--max-body-bytes). Larger bodies are answered with 413.
	MaxBodyBytes int64
	// MaxK bounds the results one query may ask for: the native k, the
	// Qdrant limit+offset and scroll limit; default 10,000 (--max-k).
	MaxK int
	// MaxResults bounds the results one request may ask for over all its
	// queries (a batch's queries × k, a scan's limit); default 1,000,000
	// (--max-results).
	MaxResults int
	// MaxAnswerBytes bounds the estimated size of an answer (see Answer);
	// default 256 MiB (--max-answer-bytes).
	MaxAnswerBytes int64
}

// Defaults.
const (
	DefaultMaxBodyBytes   = 64 << 20
	DefaultMaxK           = 10_000
	DefaultMaxResults     = 1_000_000
	DefaultMaxAnswerBytes = 256 << 20
)

// WithDefaults returns l with its zero (or negative) fields at their defaults.
func (l Limits) WithDefaults() Limits {
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if l.MaxK <= 0 {
		l.MaxK = DefaultMaxK
	}
	if l.MaxResults <= 0 {
		l.MaxResults = DefaultMaxResults
	}
	if l.MaxAnswerBytes <= 0 {
		l.MaxAnswerBytes = DefaultMaxAnswerBytes
	}
	return l
}

// Bytes an answer is estimated to take: per result (its id, score and
// punctuation; documents are not counted, their size is not known before
// they are read) and per vector number (a float32 printed shortest, as
// "-0.12345678," is 12 bytes; most are 10-12).
const (
	answerBytesPerResult = 48
	answerBytesPerNumber = 12
)

// Answer checks an answer of at most results results, each with a vector
// of dim numbers when vectors, against MaxResults and MaxAnswerBytes,
// before the work is done. The error is a 422 *Error naming the limit.
func (l *Limits) Answer(results, dim int, vectors bool) error {
	if results > l.MaxResults {
		return limitExceeded("the request asks for %d results, over the server's limit of %d per request "+
			"(ask for fewer queries or a smaller k/limit, or raise strata-server --max-results)", results, l.MaxResults)
	}
	perResult := int64(answerBytesPerResult)
	if vectors {
		perResult += int64(dim) * answerBytesPerNumber
	}
	if estimate := int64(results) * perResult; estimate > l.MaxAnswerBytes {
		what := ""
		if vectors {
			what = fmt.Sprintf(" with vectors of dimension %d", dim)
		}
		return limitExceeded("the answer would take about %d MiB (%d results%s), over the server's limit of %d MiB "+
			"(ask for fewer results or leave the vectors out, or raise strata-server --max-answer-bytes)",
			estimate>>20, results, what, l.MaxAnswerBytes>>20)
	}
	return nil
}

// TooLarge is the 413 for a body over MaxBodyBytes; length is the
// announced length, or -1 when the body was cut short while read.
func (l *Limits) TooLarge(length int64) error {
	if length >= 0 {
		return refuse(http.StatusRequestEntityTooLarge, CodeTooLarge,
			"the body holds %d bytes, over the server's limit of %d (raise strata-server --max-body-bytes)",
			length, l.MaxBodyBytes)
	}
	return refuse(http.StatusRequestEntityTooLarge, CodeTooLarge,
		"the body is over the server's limit of %d bytes (raise strata-server --max-body-bytes)", l.MaxBodyBytes)
}
