package text

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// MaxTokenBytes bounds one term: longer tokens (after folding) are
// dropped, as no one searches for them and they would bloat the
// dictionary. Lucene's StandardTokenizer uses the same 255.
const MaxTokenBytes = 255

// Analyzer names. Stored in collection manifests: do not change them.
const (
	AnalyzerSimple  = "simple"
	AnalyzerStop    = "stop"
	AnalyzerEnglish = "english"
)

// Analyzer turns text into terms (see the package comment). The zero
// value is "simple".
type Analyzer struct {
	stopWords bool
	stem      bool
	name      string
}

// ParseAnalyzer returns the analyzer of that name; "" is "english".
func ParseAnalyzer(name string) (Analyzer, error) {
	switch name {
	case AnalyzerSimple:
		return Analyzer{name: name}, nil
	case AnalyzerStop:
		return Analyzer{stopWords: true, name: name}, nil
	case AnalyzerEnglish, "":
		return Analyzer{stopWords: true, stem: true, name: AnalyzerEnglish}, nil
	}
	return Analyzer{}, fmt.Errorf("%w: unknown analyzer %q (want %q, %q or %q)",
		ErrInvalid, name, AnalyzerSimple, AnalyzerStop, AnalyzerEnglish)
}

// Name returns the analyzer's name.
func (a Analyzer) Name() string {
	if a.name == "" {
		return AnalyzerSimple
	}
	return a.name
}

// Terms returns the terms of s in order, duplicates kept.
func (a Analyzer) Terms(s string) []string {
	var terms []string
	a.each(s, nil, func(term []byte) { terms = append(terms, string(term)) })
	return terms
}

// each calls emit with every term of s, in order. The slice passed to emit
// is scratch, valid only during the call. buf is scratch too (may be nil).
func (a Analyzer) each(s string, buf []byte, emit func(term []byte)) []byte {
	token := buf[:0]
	asciiLetters := true
	flush := func() {
		if len(token) == 0 || len(token) > MaxTokenBytes {
			token, asciiLetters = token[:0], true
			return
		}
		if a.stopWords {
			if _, stop := englishStopWords[string(token)]; stop {
				token, asciiLetters = token[:0], true
				return
			}
		}
		if a.stem && asciiLetters && len(token) > 2 {
			emit([]byte(english.Stem(string(token), true)))
		} else {
			emit(token)
		}
		token, asciiLetters = token[:0], true
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == utf8.RuneError && size == 1 || !isWordRune(r) {
			flush()
			continue
		}
		if isSingleRuneWord(r) {
			flush()
			token = utf8.AppendRune(token, r)
			asciiLetters = false
			flush()
			continue
		}
		if r < utf8.RuneSelf {
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			} else if r < 'a' || r > 'z' {
				asciiLetters = false
			}
			token = append(token, byte(r))
			continue
		}
		asciiLetters = false
		if len(token) <= MaxTokenBytes {
			token = utf8.AppendRune(token, fold(r))
		}
	}
	flush()
	return token
}

// isWordRune reports whether r belongs to a token: a letter, a number or a
// combining mark.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r)
}

// isSingleRuneWord reports scripts written without spaces, where each rune
// is a term.
func isSingleRuneWord(r rune) bool {
	return r >= 0x2E80 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r))
}

// fold is simple case folding of one rune: upper then lower maps every
// member of a case orbit (σ, ς, Σ; k, K, the Kelvin sign) to one rune.
func fold(r rune) rune {
	return unicode.ToLower(unicode.ToUpper(r))
}
