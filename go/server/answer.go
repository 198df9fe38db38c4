package server

import "net/http"

// streamAt is the size past which an answer is sent as it is written
// (chunked, no Content-Length) instead of whole: below it, an answer is
// one Write with a Content-Length, as the load generator's client needs;
// above it, the server holds at most about this much of an answer at a
// time, however large the answer (within Limits.MaxAnswerBytes).
const streamAt = 256 << 10

// answer sends a 200 JSON answer that may be too large to hold whole.
type answer struct {
	w         http.ResponseWriter
	streaming bool
	gone      bool // a write failed: the client is gone
}

// spill sends b once it holds streamAt bytes or more, and returns it
// emptied; below that it returns b as it is.
func (a *answer) spill(b []byte) []byte {
	if len(b) < streamAt {
		return b
	}
	if !a.streaming {
		a.w.Header()["Content-Type"] = jsonContentType
		a.w.WriteHeader(http.StatusOK)
		a.streaming = true
	}
	if !a.gone {
		if _, err := a.w.Write(b); err != nil {
			a.gone = true
		}
	}
	return b[:0]
}

// finish sends the rest of the answer, b.
func (a *answer) finish(b []byte) {
	if !a.streaming {
		writeJSON(a.w, http.StatusOK, b)
		return
	}
	if !a.gone {
		a.w.Write(append(b, '\n'))
	}
}
