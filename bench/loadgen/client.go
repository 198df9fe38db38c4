package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strconv"
)

// httpConn is one keep-alive HTTP/1.1 connection that sends requests
// encoded in advance (requestBytes) and reads each answer with a minimal
// parser: the status line, Content-Length, and that many body bytes. On
// the same cores as the server, net/http's client cost about a third of
// the server's CPU per query (transport goroutines, header maps, a
// bufio.Reader per body); this costs a write, a read and a scan for
// "\r\n\r\n", and allocates nothing once its buffer has grown.
//
// It understands only what strata-server sends: every answer has a
// Content-Length (writeJSON sets it). Chunked answers, 1xx answers and
// "Connection: close" are reported as errors, so they cannot pass
// silently as successes.
type httpConn struct {
	addr       string
	conn       net.Conn
	buf        []byte // buf[start:end] is read but not yet parsed
	start, end int
}

var (
	errChunked   = errors.New("answer without Content-Length (chunked?)")
	errClose     = errors.New("server closed the connection (Connection: close)")
	errMalformed = errors.New("malformed HTTP answer")
)

// requestBytes is a whole POST request: request line, headers and body.
func requestBytes(host, path string, body []byte) []byte {
	return requestWith("POST", host, path, "", body)
}

// requestWith is a whole request of any method, with more header lines
// (each ending in "\r\n") after Host.
func requestWith(method, host, path, headers string, body []byte) []byte {
	b := make([]byte, 0, len(body)+160+len(headers))
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\n"...)
	b = append(b, headers...)
	b = append(b, "Content-Type: application/json\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	return append(b, body...)
}

// roundTrip sends req and returns the answer's status and body; the body
// aliases the connection's buffer until the next call. After an error the
// connection is closed, and the next call dials again.
func (h *httpConn) roundTrip(req []byte) (status int, body []byte, err error) {
	return h.roundTripIn2(req, 0)
}

// roundTripIn2 is roundTrip with the request's first head bytes (its
// header block) sent in a write of their own, then the rest, as httpx
// (under qdrant-client) sends a request: the server may read the header
// block before the body has come. head 0 is one write.
func (h *httpConn) roundTripIn2(req []byte, head int) (status int, body []byte, err error) {
	if h.conn == nil {
		if h.conn, err = net.Dial("tcp", h.addr); err != nil {
			return 0, nil, err
		}
		h.start, h.end = 0, 0
	}
	if h.buf == nil {
		h.buf = make([]byte, 64<<10)
	}
	if head > 0 {
		_, err = h.conn.Write(req[:head])
	}
	if err == nil {
		if _, err = h.conn.Write(req[head:]); err == nil {
			status, body, err = h.readAnswer()
		}
	}
	if err != nil {
		h.close()
	}
	return status, body, err
}

func (h *httpConn) close() {
	if h.conn != nil {
		h.conn.Close()
		h.conn = nil
	}
}

// readAnswer parses one answer from the connection.
func (h *httpConn) readAnswer() (status int, body []byte, err error) {
	// Offsets are relative to h.start: fill may move the unread bytes.
	headerLen, scanned := 0, 0
	for {
		if i := bytes.Index(h.buf[h.start+scanned:h.end], []byte("\r\n\r\n")); i >= 0 {
			headerLen = scanned + i + 4
			break
		}
		if h.end-h.start > maxHeader {
			return 0, nil, fmt.Errorf("%w: no end of header in %d bytes", errMalformed, h.end-h.start)
		}
		scanned = max(0, h.end-h.start-3) // the marker may straddle two reads
		if err := h.fill(h.end - h.start + 1); err != nil {
			return 0, nil, err
		}
	}
	status, length, err := parseHeader(h.buf[h.start : h.start+headerLen])
	if err != nil {
		return 0, nil, err
	}
	if h.end-h.start < headerLen+length {
		if err := h.fill(headerLen + length); err != nil {
			return 0, nil, err
		}
	}
	body = h.buf[h.start+headerLen : h.start+headerLen+length]
	h.start += headerLen + length
	if h.start == h.end {
		h.start, h.end = 0, 0
	}
	return status, body, nil
}

// maxHeader bounds an answer's header block: strata-server's are ~100 bytes.
const maxHeader = 64 << 10

// fill reads until at least need unparsed bytes are buffered, moving them
// to the buffer's start or growing it when they would not fit.
func (h *httpConn) fill(need int) error {
	if need > len(h.buf) {
		grown := make([]byte, max(need, 2*len(h.buf)))
		h.end = copy(grown, h.buf[h.start:h.end])
		h.buf, h.start = grown, 0
	} else if h.start+need > len(h.buf) {
		h.end = copy(h.buf, h.buf[h.start:h.end])
		h.start = 0
	}
	for h.end-h.start < need {
		n, err := h.conn.Read(h.buf[h.end:])
		h.end += n
		if err != nil {
			return err
		}
	}
	return nil
}

// parseHeader reads the status code and Content-Length of an answer's
// header block (status line and fields, ending with "\r\n\r\n").
func parseHeader(header []byte) (status, length int, err error) {
	line, rest, _ := bytes.Cut(header, []byte("\r\n"))
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) || len(line) > 12 && line[12] != ' ' {
		return 0, 0, fmt.Errorf("%w: status line %q", errMalformed, line)
	}
	if status = digits(line[9:12]); status < 0 {
		return 0, 0, fmt.Errorf("%w: status line %q", errMalformed, line)
	}
	length = -1
	for len(rest) > 2 {
		var field []byte
		field, rest, _ = bytes.Cut(rest, []byte("\r\n"))
		name, value, ok := bytes.Cut(field, []byte(":"))
		if !ok {
			return 0, 0, fmt.Errorf("%w: header line %q", errMalformed, field)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			n := digits(value)
			if n < 0 || len(value) > 12 {
				return 0, 0, fmt.Errorf("%w: Content-Length %q", errMalformed, value)
			}
			length = n
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return 0, 0, errChunked
		case bytes.EqualFold(name, []byte("Connection")) && bytes.EqualFold(value, []byte("close")):
			return 0, 0, errClose
		}
	}
	if length < 0 {
		return 0, 0, errChunked
	}
	return status, length, nil
}

// digits reads a non-empty string of decimal digits; -1 if it is not one.
func digits(b []byte) int {
	if len(b) == 0 {
		return -1
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}
