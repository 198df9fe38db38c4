// Package text is the full-text side of a collection: an analyzer that
// turns a string into terms, and an in-memory inverted index over one
// metadata field, scored with BM25 and searched for the top k ids.
//
// # Analysis
//
// The same Analyzer runs at index time and at query time:
//
//	text ─► segment ─► fold case ─► drop stop words ─► stem ─► terms
//	        (all)      (all)        ("stop", "english") ("english")
//
// Each step:
//
//   - Segmentation: a token is a maximal run of runes that are letters
//     (Unicode L*), numbers (N*) or combining marks (Mn, Mc, Me), so
//     "naïve café 北京 Привет_мир x86" gives naïve, café, 北, 京, привет,
//     мир, x86. Every other rune (spaces, punctuation, symbols, '_', invalid
//     UTF-8) separates tokens. Han ideographs and Hiragana are one token per
//     rune, as Lucene's StandardTokenizer does, since they are written
//     without spaces and there is no dictionary here. Apostrophes split
//     ("don't" gives don, t): a simplification of UAX #29.
//   - Case folding: simple Unicode case folding, rune by rune
//     (unicode.ToLower(unicode.ToUpper(r))): "STRASSE" and "strasse" match,
//     final sigma and sigma match; "ß" stays "ß" (no full folding).
//   - Tokens longer than MaxTokenBytes after folding are dropped.
//   - Stop words ("stop" and "english"): Lucene's English stop set
//     (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, 33 words).
//   - Stemming ("english"): Snowball English (Porter2) from
//     github.com/kljensen/snowball, applied to tokens made of ASCII letters
//     only, so other scripts and tokens with digits are left alone.
//
// Analyzers are named, and the name is what a collection stores: "simple"
// (segment and fold), "stop" (plus stop words), "english" (plus stemming,
// the default).
//
// # Scoring
//
// BM25 as Lucene (since 8.0) and bm25s's "lucene" method compute it, with
// exact document lengths (Lucene rounds them to one byte):
//
//	score(d, q) = Σ_{t in q} idf(t) · tf(t,d) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
//	idf(t)      = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))
//
// tf is the count of t among d's terms, |d| the number of terms of d
// (after stop words), N the number of live documents with at least one
// term (Lucene's docCount: a missing or empty field does not count),
// df(t) the number of those containing t, and avgdl the mean |d| over
// them. A term repeated in the query counts once per occurrence, as in
// Lucene's BooleanQuery, bm25s and rank_bm25. Defaults are Lucene's: k1 =
// 1.2, b = 0.75. Scores are float32; ties rank the smaller id first.
//
// # Index
//
// Each document with at least one term gets a slot; each term a posting
// list of (slot, tf) pairs in insertion order. A delete (or the delete half
// of a replace) marks the slot dead and updates df, N and the total length
// at once; its postings stay until a compaction, which rewrites every list
// and renumbers slots once dead slots outnumber live ones (amortised O(1)
// per delete). Slots are not reused before a compaction, so a stale
// posting can never be mistaken for a new document's.
//
// The index keeps nothing on disk: a collection rebuilds it from its
// documents when it opens (see package collection).
package text
