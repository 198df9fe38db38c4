package meta

import (
	"fmt"
	"strings"
	"time"
)

// This file holds datetimes: strings that ParseDatetime reads, compared
// by the instant they name at microsecond precision, as Qdrant's datetime
// payload values are.

// ParseDatetime reads a datetime as Qdrant does (the formats of
// qdrant-client's local mode, which mirror Qdrant's parser):
//
//	2024-05-01                          midnight UTC
//	2024-05-01T10:30  2024-05-01 10:30  UTC
//	2024-05-01T10:30:15[.ffffff]        UTC; also with ' ' for 'T'
//	...10:30:15[.ffffff]<zone>          zone Z or z, +HH, +HHMM, +HH:MM
//	                                    (+HH:MM:SS), optionally after spaces;
//	                                    or " UTC"
//
// Leading white space is skipped; a fraction longer than six digits is
// cut to microseconds. Month, day and the time fields take one or two
// digits, the year four. The time is returned in UTC; ok is false for
// anything else, an impossible date (2023-02-29) included.
func ParseDatetime(s string) (t time.Time, ok bool) {
	s = strings.TrimLeft(s, " \t\n\r\v\f")
	if strings.HasSuffix(s, " UTC") {
		s = s[:len(s)-len(" UTC")] + "+00:00"
	}
	p := dtParser{s: s}
	year, ok1 := p.digits(4, 4)
	ok2 := p.byte('-')
	month, ok3 := p.digits(1, 2)
	ok4 := p.byte('-')
	day, ok5 := p.digits(1, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5) {
		return time.Time{}, false
	}
	var hour, minute, sec, micros int
	offset := 0
	if !p.done() {
		if !p.byte('T') && !p.byte(' ') {
			return time.Time{}, false
		}
		var okH, okC, okM bool
		hour, okH = p.digits(1, 2)
		okC = p.byte(':')
		minute, okM = p.digits(1, 2)
		if !(okH && okC && okM) {
			return time.Time{}, false
		}
		if !p.done() {
			if !p.byte(':') {
				return time.Time{}, false
			}
			var okS bool
			if sec, okS = p.digits(1, 2); !okS {
				return time.Time{}, false
			}
			if p.byte('.') {
				start := p.at
				for !p.done() && isDigit(p.s[p.at]) {
					p.at++
				}
				frac := p.s[start:p.at]
				if frac == "" {
					return time.Time{}, false
				}
				frac = (frac + "000000")[:6]
				for _, c := range frac {
					micros = micros*10 + int(c-'0')
				}
			}
			if !p.done() {
				var okZ bool
				if offset, okZ = p.zone(); !okZ {
					return time.Time{}, false
				}
			}
		}
	}
	if month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || sec > 59 || year < 1 {
		return time.Time{}, false
	}
	t = time.Date(year, time.Month(month), day, hour, minute, sec, micros*1000, time.UTC)
	if t.Day() != day { // normalised: the date does not exist
		return time.Time{}, false
	}
	return t.Add(-time.Duration(offset) * time.Second), true
}

// DatetimeMicros is the instant t as microseconds since the Unix epoch,
// the number Qdrant orders datetimes by and answers as order_value.
func DatetimeMicros(t time.Time) int64 { return t.UnixMicro() }

type dtParser struct {
	s  string
	at int
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (p *dtParser) done() bool { return p.at == len(p.s) }

func (p *dtParser) byte(c byte) bool {
	if p.at < len(p.s) && p.s[p.at] == c {
		p.at++
		return true
	}
	return false
}

func (p *dtParser) digits(least, most int) (int, bool) {
	n, i := 0, 0
	for i < most && p.at < len(p.s) && isDigit(p.s[p.at]) {
		n = n*10 + int(p.s[p.at]-'0')
		p.at++
		i++
	}
	return n, i >= least
}

// zone reads the rest of the text as a time zone, returning its offset
// east of UTC in seconds.
func (p *dtParser) zone() (int, bool) {
	for p.byte(' ') {
	}
	rest := p.s[p.at:]
	if rest == "Z" || rest == "z" {
		return 0, true
	}
	if rest == "" || (rest[0] != '+' && rest[0] != '-') {
		return 0, false
	}
	sign := 1
	if rest[0] == '-' {
		sign = -1
	}
	p.at++
	hh, okH := p.digits(2, 2)
	if !okH {
		return 0, false
	}
	if p.done() { // +HH
		return sign * hh * 3600, hh < 24
	}
	colon := p.byte(':')
	mm, okM := p.digits(2, 2)
	if !okM || mm > 59 {
		return 0, false
	}
	ss := 0
	if !p.done() {
		if colon && !p.byte(':') {
			return 0, false
		}
		var okS bool
		if ss, okS = p.digits(2, 2); !okS || ss > 59 || !p.done() {
			return 0, false
		}
	}
	if hh > 23 {
		return 0, false
	}
	return sign * (hh*3600 + mm*60 + ss), true
}

// TimeBounds is an interval of instants; a nil bound is absent.
type TimeBounds struct {
	Gt, Gte, Lt, Lte *time.Time
}

// DatetimeRange matches a document whose field is a string that
// ParseDatetime reads as an instant inside b, or a list holding one. Like
// Within, all bounds apply to the same element.
func DatetimeRange(p Path, b TimeBounds) *Filter {
	n := newLeaf(nodeDatetime, p)
	for _, bound := range []struct {
		op rangeOp
		at *time.Time
	}{{opGt, b.Gt}, {opGte, b.Gte}, {opLt, b.Lt}, {opLte, b.Lte}} {
		if bound.at != nil {
			n.times.tighten(bound.op, DatetimeMicros(*bound.at))
		}
	}
	return wrap(n)
}

// OrderValue is one value a scroll can order by: a number, or a datetime
// as microseconds since the epoch (IsTime).
type OrderValue struct {
	Number float64
	Micros int64
	IsTime bool
}

// Float is the value as a number (a datetime's microseconds).
func (v OrderValue) Float() float64 {
	if v.IsTime {
		return float64(v.Micros)
	}
	return v.Number
}

// CompareOrderValues orders two values: datetimes by their microseconds,
// anything else by its value as a number.
func CompareOrderValues(a, b OrderValue) int {
	if a.IsTime && b.IsTime {
		switch {
		case a.Micros < b.Micros:
			return -1
		case a.Micros > b.Micros:
			return 1
		}
		return 0
	}
	x, y := a.Float(), b.Float()
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// OrderValues returns the values at p that a scroll can order by, as
// Qdrant's order_by reads them: each number and each string that
// ParseDatetime reads, of the values the path reaches and the elements
// of lists there, in document order (a point is listed once per value).
func (d Document) OrderValues(p Path) []OrderValue {
	var out []OrderValue
	add := func(v value) {
		switch v.kind {
		case kindNumber:
			out = append(out, OrderValue{Number: v.num})
		case kindString:
			if t, ok := ParseDatetime(v.str); ok {
				out = append(out, OrderValue{Micros: DatetimeMicros(t), IsTime: true})
			}
		}
	}
	for _, v := range p.reach(d.root()) {
		if v.kind == kindList {
			for _, e := range v.list {
				add(e)
			}
			continue
		}
		add(v)
	}
	return out
}

// ParseOrderValue reads a start_from operand: a number, or a datetime
// string.
func ParseOrderValue(s string) (OrderValue, error) {
	t, ok := ParseDatetime(s)
	if !ok {
		return OrderValue{}, fmt.Errorf("%w: %q is not a datetime (RFC 3339, or YYYY-MM-DD[ HH:MM[:SS[.ffffff]]])", ErrInvalidFilter, s)
	}
	return OrderValue{Micros: DatetimeMicros(t), IsTime: true}, nil
}
